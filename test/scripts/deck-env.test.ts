import test from 'ava';
import { deckEnv } from '../../scripts/tools/deck-env.ts';
import { RUN_BUNDLED, runToEnd } from '../helpers/process.ts';

// `npm run deck` (scripts/tools/deck.ts): kong.yml's DECK_* variables, as npm start gives them, for
// commands that only read; a write names every unset one at once (decK names one per try).
const DIFF = ['gateway', 'diff', '--kong-addr', 'http://127.0.0.1:8001', 'gateway/kong.yml'];

test("a read gets npm start's values for the unset ones, and names those kong.yml uses", (t) => {
  const { env, filled } = deckEnv(DIFF, { BACKEND_PORT: '3100', DECK_RATE_LIMIT_POLICY: 'redis' });
  t.like(env, {
    DECK_ANIMAL_STORE_BACKEND_URL: 'http://127.0.0.1:3100',
    DECK_RATE_LIMIT_POLICY: 'redis',
    DECK_RATE_LIMIT_REDIS_HOST: '127.0.0.1',
    DECK_RATE_LIMIT_REDIS_PORT: '6379',
    DECK_ANIMAL_STORE_HOSTS: '[]',
    DECK_ANIMAL_STORE_HTTPS_ONLY: 'false',
    DECK_ANIMAL_STORE_PORTAL_URL: 'http://127.0.0.1:3001',
  });
  t.deepEqual(filled, [
    'DECK_ANIMAL_STORE_HOSTS=[]',
    'DECK_ANIMAL_STORE_PORTAL_URL=http://127.0.0.1:3001',
    'DECK_ANIMAL_STORE_HTTPS_ONLY=false',
    'DECK_RATE_LIMIT_REDIS_HOST=127.0.0.1',
    'DECK_RATE_LIMIT_REDIS_PORT=6379',
    'DECK_ANIMAL_STORE_BACKEND_URL=http://127.0.0.1:3100',
  ]);
  t.deepEqual(deckEnv(['version'], {}).filled, [], 'no file, nothing to name');
});

test('a write refuses, naming every unset variable its file uses', (t) => {
  for (const args of [['gateway', 'sync', 'gateway/kong.yml'], ['--kong-addr', 'http://k:8001', 'gateway', 'apply', 'gateway/kong.yml'], ['sync', '-s', 'gateway/kong.yml']]) {
    const error = t.throws(() => deckEnv(args, { DECK_RATE_LIMIT_POLICY: 'redis' }), undefined, args.join(' '));
    t.is(
      error?.message,
      "DECK_ANIMAL_STORE_BACKEND_URL, DECK_ANIMAL_STORE_HTTPS_ONLY, DECK_RATE_LIMIT_REDIS_HOST, DECK_RATE_LIMIT_REDIS_PORT, DECK_ANIMAL_STORE_HOSTS, DECK_ANIMAL_STORE_PORTAL_URL unset: " +
        "a write takes kong.yml's values from you, never npm start's (npm start's: DECK_ANIMAL_STORE_BACKEND_URL=http://127.0.0.1:3000 " +
        'DECK_ANIMAL_STORE_HTTPS_ONLY=false DECK_RATE_LIMIT_REDIS_HOST=127.0.0.1 DECK_RATE_LIMIT_REDIS_PORT=6379 DECK_ANIMAL_STORE_HOSTS=[] DECK_ANIMAL_STORE_PORTAL_URL=http://127.0.0.1:3001)',
    );
  }
  const all = {
    DECK_ANIMAL_STORE_BACKEND_URL: 'http://b',
    DECK_ANIMAL_STORE_HOSTS: '[]',
    DECK_ANIMAL_STORE_PORTAL_URL: 'http://p',
    DECK_ANIMAL_STORE_HTTPS_ONLY: 'true',
    DECK_RATE_LIMIT_POLICY: 'redis',
    DECK_RATE_LIMIT_REDIS_HOST: 'r',
    DECK_RATE_LIMIT_REDIS_PORT: '1',
  };
  t.deepEqual(deckEnv(['gateway', 'sync', 'gateway/kong.yml'], all), { env: all, filled: [] });
});

test('npm run deck -- gateway sync without the variables: one line, exit 2, nothing sent', async (t) => {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DECK_')));
  const result = await runToEnd(process.execPath, [RUN_BUNDLED, 'scripts/tools/deck.ts', 'gateway', 'sync', '--kong-addr', 'http://127.0.0.1:9', 'gateway/kong.yml'], clean);
  t.is(result.code, 2);
  t.regex(result.stderr, /^error: DECK_ANIMAL_STORE_BACKEND_URL, DECK_ANIMAL_STORE_HTTPS_ONLY, DECK_RATE_LIMIT_POLICY, DECK_RATE_LIMIT_REDIS_HOST, DECK_RATE_LIMIT_REDIS_PORT, DECK_ANIMAL_STORE_HOSTS, DECK_ANIMAL_STORE_PORTAL_URL unset: /);
  t.is(result.stderr.split('\n').length, 2);
});
