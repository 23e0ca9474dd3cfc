import test from 'ava';
import { KONG_YML, deck, runDeck, startDeckStack, summaryOf, type DeckStack } from '../helpers/deck.ts';

// decK (Kong's own declarative client, v1.65.1) judges the local gateway: kong.yml is valid for
// it, the local Admin API passes its online validation, and the gateway's built-in load of
// kong.yml leaves nothing for `deck gateway diff` to do, i.e. it does what `deck gateway sync` does.
let stack: DeckStack;

test.before(async () => {
  // hosts named: with [] decK's diff reports every route updated after any load, Kong's too
  // (go-kong leaves the empty list out, Kong stores none: docs/shared-kong.md, "Hosts")
  stack = await startDeckStack('kong.yml', { DECK_ANIMAL_STORE_HOSTS: '["api.animal.store"]' });
});
test.after.always(async () => {
  await stack?.dispose();
});

test('deck file validate accepts gateway/kong.yml', async (t) => {
  const result = await runDeck(['file', 'validate', KONG_YML], stack.env);
  t.is(result.code, 0, result.stderr);
});

test('deck file validate fails without the DECK_ variable kong.yml uses', async (t) => {
  const result = await runDeck(['file', 'validate', KONG_YML], {});
  t.not(result.code, 0);
  t.regex(result.stderr, /DECK_ANIMAL_STORE_BACKEND_URL/);
});

test('deck gateway validate passes against the local Admin API', async (t) => {
  const result = await runDeck(['gateway', 'validate', ...stack.addr, KONG_YML], stack.env);
  t.is(result.code, 0, `${result.stdout}\n${result.stderr}`);
});

test('deck gateway validate reports what the gateway refuses, naming the field', async (t) => {
  const file = stack.file(
    'bad.yml',
    '_format_version: "3.0"\nservices:\n  - name: s\n    url: http://127.0.0.1:1\n    tls_verify: true\n',
  );
  const result = await runDeck(['gateway', 'validate', ...stack.addr, file], stack.env);
  t.not(result.code, 0);
  t.regex(result.stderr, /tls_verify/);
});

test('deck gateway validate names an entity type the gateway does not run (a sync would be refused)', async (t) => {
  const file = stack.file(
    'not-run.yml',
    '_format_version: "3.0"\nupstreams:\n  - name: up\nconsumers:\n  - username: u\n    basicauth_credentials:\n      - username: u\n        password: p\n',
  );
  const result = await runDeck(['gateway', 'validate', ...stack.addr, file], stack.env);
  t.not(result.code, 0);
  // before, basicauth_credentials was "No entity named" and upstreams passed
  t.regex(result.stderr, /upstreams: not supported by the local gateway/);
  t.regex(result.stderr, /basicauth_credentials: not supported by the local gateway/);
});

test.serial('after the built-in load of kong.yml, deck gateway diff finds nothing to do', async (t) => {
  const output = await deck(['gateway', 'diff', ...stack.addr, KONG_YML], stack.env);
  t.deepEqual(summaryOf(output), { created: 0, updated: 0, deleted: 0 }, output);
});

test.serial('deck gateway diff sees a change made through the Admin API', async (t) => {
  const patched = await stack.admin('/services/animal-store-backend', { method: 'PATCH', json: { retries: 4 } });
  t.is(patched.status, 200);
  try {
    const output = await deck(['gateway', 'diff', ...stack.addr, KONG_YML], stack.env);
    t.deepEqual(summaryOf(output), { created: 0, updated: 1, deleted: 0 }, output);
    t.regex(output, /updating service animal-store-backend/);
  } finally {
    await stack.admin('/services/animal-store-backend', { method: 'PATCH', json: { retries: 2 } });
  }
});
