import test from 'ava';
import { generateApiKey } from '../../packages/provisioning/index.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';

// Named, scoped and expiring keys through the consumers CLI against the local gateway's Admin
// API, each key then used through the gateway running kong.yml (docs/api-keys.md). The stack's
// manual clock stands in for waiting out a ttl; the tests that move it or depend on it are serial
// (ava runs those before the others), since every test of the file shares the one clock.
type Cli = (args: string[]) => ReturnType<typeof runCliInProcess>;
let stack: TestStack;
let cli: Cli;

test.before(async () => {
  stack = await startStack();
  cli = (args) => runCliInProcess(args, { KONG_ADMIN_URL: stack.gateway.adminUrl });
});
test.after.always(async () => {
  await stack?.dispose();
});

async function json<T>(cli: Cli, args: string[]): Promise<T> {
  const result = await cli([...args, '--json']);
  if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

type Issued = { key: string; fingerprint: string; name: string; scopes: string[] };

test('add-key: several named keys, each with its scopes; show lists them; names stay unique', async (t) => {
  const main = await json<Issued>(cli, ['create', '--username', 'sk-named', '--plan', 'pro']);
  const ci = await json<Issued>(cli, ['add-key', 'sk-named', '--name', 'ci', '--scope', 'pets:read,orders:read']);
  t.like(ci, { name: 'ci', scopes: ['pets:read', 'orders:read'] });
  t.is((await stack.call('/v1/pets', { key: ci.key })).status, 200);
  const refused = await stack.call('/v1/pets', { key: ci.key, method: 'POST', json: { name: 'Rex', categoryId: 1 } });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'insufficient_scope');
  t.is((await stack.call('/v1/pets', { key: main.key, method: 'POST', json: { name: 'Rex', categoryId: 1 } })).status, 201);

  const show = await cli(['show', 'sk-named']);
  const keys = show.stdout.split('\n').filter((line) => line.startsWith('  key'));
  t.is(keys.length, 2, show.stdout);
  t.true(keys.some((line) => line.startsWith(`  key      ci fingerprint ${ci.fingerprint}, scopes pets:read,orders:read, expires never,`)), show.stdout);
  t.true(keys.some((line) => line.startsWith(`  key      default fingerprint ${main.fingerprint}, scopes all, expires never,`)), show.stdout);

  const again = await cli(['add-key', 'sk-named', '--name', 'ci']);
  t.is(again.code, 1);
  t.is(again.stderr, 'error: consumer sk-named already has a key named ci (rotating it replaces it)\n');
});

test.serial('rotate-key keeps the scopes (and can change them); the old key works during the grace period', async (t) => {
  await json<Issued>(cli, ['create', '--username', 'sk-rotate', '--plan', 'pro', '--key-name', 'ci', '--scope', 'orders:read']);
  const old = await json<Issued>(cli, ['add-key', 'sk-rotate', '--name', 'laptop', '--scope', 'pets:read']);
  const ambiguous = await cli(['rotate-key', 'sk-rotate']);
  t.is(ambiguous.code, 2);
  t.is(ambiguous.stderr, 'error: consumer sk-rotate has keys named ci, laptop: name the one to use (see rotate-key --help)\n');

  const rotated = await json<Issued>(cli, ['rotate-key', 'sk-rotate', '--name', 'laptop', '--grace', '60']);
  t.like(rotated, { name: 'laptop', scopes: ['pets:read'] });
  for (const key of [old.key, rotated.key]) {
    t.is((await stack.call('/v1/pets', { key })).status, 200);
    t.is((await stack.call('/v1/store/orders', { key })).status, 403, 'the new key keeps the scopes');
  }
  const show = (await cli(['show', 'sk-rotate'])).stdout;
  t.regex(show, new RegExp(`key      laptop fingerprint ${old.fingerprint}, scopes pets:read, expires in 1m .*, replaced \\(grace period\\)`));

  const widened = await json<Issued>(cli, ['rotate-key', 'sk-rotate', '--name', 'laptop', '--scope', 'pets:read', '--scope', 'orders:write']);
  t.deepEqual(widened.scopes, ['pets:read', 'orders:write']);
  await stack.clock.advance(61_000);
  t.is((await stack.call('/v1/pets', { key: old.key })).status, 401, 'the grace is over');
  t.is((await stack.call('/v1/pets', { key: rotated.key })).status, 200, 'rotated out, but its own (default 24 h) grace still runs');
  t.not((await stack.call('/v1/store/orders', { key: widened.key, method: 'POST', json: { petId: 1 } })).status, 403, 'orders:write now');
});

test.serial('an expired key answers exactly as an unknown one; show gives the time left; list --expiring finds it', async (t) => {
  await json<Issued>(cli, ['create', '--username', 'sk-expiry', '--plan', 'pro']);
  const temp = await json<Issued>(cli, ['add-key', 'sk-expiry', '--name', 'temp', '--expires-in', '2h']);
  const show = (await cli(['show', 'sk-expiry'])).stdout;
  t.regex(show, new RegExp(`key      temp fingerprint ${temp.fingerprint}, scopes all, expires in 2h \\(\\S+Z\\),`));

  const expiring = await json<Array<{ username: string; key: { name: string; fingerprint: string; expiresInSeconds: number } }>>(cli, [
    'list',
    '--expiring',
    '7d',
  ]);
  const mine = expiring.filter((entry) => entry.username === 'sk-expiry');
  t.deepEqual(mine.map((entry) => [entry.key.name, entry.key.fingerprint, entry.key.expiresInSeconds]), [['temp', temp.fingerprint, 7200]]);
  const table = (await cli(['list', '--expiring', '1h'])).stdout;
  t.false(table.includes('sk-expiry'), 'not within the hour');

  t.is((await stack.call('/v1/pets', { key: temp.key })).status, 200);
  await stack.clock.advance(7201_000);
  const expired = await stack.call('/v1/pets', { key: temp.key });
  const unknown = await stack.call('/v1/pets', { key: generateApiKey() });
  t.is(expired.status, 401);
  t.deepEqual(expired.body, unknown.body);
  t.is(expired.body.code, 'invalid_api_key');
  t.is(expired.headers.get('www-authenticate'), unknown.headers.get('www-authenticate'));
  t.is(expired.headers.get('x-ratelimit-limit'), unknown.headers.get('x-ratelimit-limit'), "counted as the anonymous consumer's, as an unknown key");
  t.false((await cli(['show', 'sk-expiry'])).stdout.includes('temp'), 'an expired key is gone');
});

test.serial('--expires-at: show, list --expiring and rotate-key give the very instant, rotation after rotation', async (t) => {
  // the gateway's clock half a second into its second: Kong's time left, rounded down, is a
  // second short of the instant (put back on a whole second after, for the tests that follow)
  await stack.clock.advance(500);
  t.teardown(() => stack.clock.advance(500));
  const now = new Date();
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 3);
  const day = new Date(midnight).toISOString().slice(0, 10);
  const instant = `(${new Date(midnight).toISOString()})`;
  const created = await json<Issued & { expiresAt: number }>(cli, ['create', '--username', 'sk-exact', '--plan', 'pro', '--expires-at', day]);
  t.is(created.expiresAt, midnight / 1000);
  const keyLine = async () => (await cli(['show', 'sk-exact'])).stdout.split('\n').filter((line) => line.startsWith('  key') && !line.includes('replaced'));
  t.true((await keyLine())[0]?.includes(instant), (await keyLine()).join('\n'));
  const expiring = (await cli(['list', '--expiring', '7d'])).stdout.split('\n').find((line) => line.startsWith('sk-exact '));
  t.true(expiring?.endsWith(instant), expiring);

  for (let i = 0; i < 3; i++) {
    const rotated = await json<Issued & { expiresAt: number }>(cli, ['rotate-key', 'sk-exact', '--grace', '60']);
    t.is(rotated.expiresAt, midnight / 1000, 'the same instant');
  }
  const lines = await keyLine();
  t.is(lines.length, 1);
  t.true(lines[0]!.includes(instant), lines[0]);
});

test('revoke-key --name revokes that key only', async (t) => {
  const main = await json<Issued>(cli, ['create', '--username', 'sk-revoke', '--plan', 'pro']);
  const ci = await json<Issued>(cli, ['add-key', 'sk-revoke', '--name', 'ci']);
  t.is((await cli(['revoke-key', 'sk-revoke', '--name', 'ci'])).stdout, 'revoked 1 key(s) of sk-revoke\n');
  t.is((await stack.call('/v1/pets', { key: ci.key })).status, 401);
  t.is((await stack.call('/v1/pets', { key: main.key })).status, 200);
  const missing = await cli(['revoke-key', 'sk-revoke', '--name', 'ci']);
  t.is(missing.code, 1);
  t.is(missing.stderr, 'error: consumer sk-revoke has no key named ci\n');
});

test('bad scopes, names and durations: exit 2, one line, nothing sent', async (t) => {
  await json<Issued>(cli, ['create', '--username', 'sk-usage', '--plan', 'free']);
  const cases: Array<[string[], RegExp]> = [
    [['add-key', 'sk-usage', '--name', 'ci', '--scope', 'pets:delete'], /^error: option '--scope <scopes>' argument 'pets:delete' is invalid\. It must be one of pets:read, pets:write, orders:read, orders:write/],
    [['create', '--username', 'sk-usage2', '--plan', 'free', '--scope', 'pets:read,'], /^error: option '--scope <scopes>' argument 'pets:read,' is invalid/],
    [['add-key', 'sk-usage', '--name', 'ci', '--expires-in', '30x'], /^error: option '--expires-in <duration>' argument '30x' is invalid\. It must be a duration such as 30d/],
    [['add-key', 'sk-usage', '--name', 'ci', '--expires-in', '1500ms'], /^error: option '--expires-in <duration>' argument '1500ms' is invalid/],
    [['add-key', 'sk-usage', '--name', 'ci', '--expires-in', '10000d'], /It must be at most 100000000s/],
    [['add-key', 'sk-usage', '--name', 'ci', '--expires-at', '2030-02-30'], /^error: option '--expires-at <time>' argument '2030-02-30' is invalid/],
    [['add-key', 'sk-usage', '--name', 'ci', '--expires-at', '2001-01-01'], /^error: the expiry 2001-01-01T00:00:00\.000Z is not in the future \(see add-key --help\)\n$/],
    [['add-key', 'sk-usage', '--name', 'ci', '--expires-in', '1d', '--expires-at', '2040-01-01'], /^error: give --expires-in or --expires-at, not both/],
    [['add-key', 'sk-usage', '--name', 'Build Box'], /^error: key name "Build Box": use 1 to 40/],
    [['add-key', 'sk-usage'], /^error: required option '--name <name>' not specified/],
    [['rotate-key', 'sk-usage', '--scope', 'everything'], /^error: option '--scope <scopes>' argument 'everything' is invalid/],
    [['list', '--expiring', 'soon'], /^error: option '--expiring <duration>' argument 'soon' is invalid/],
  ];
  const before = (await stack.admin('/consumers/sk-usage/key-auth')).body.data.length;
  // in this process, as the other tests here: a usage error's exit 2 from the process itself is
  // consumers-cli.test.ts's (a node start per case was ~1 CPU-s, 11 of them)
  for (const [args, message] of cases) {
    const result = await cli(args);
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr, message, args.join(' '));
    t.is(result.stderr.split('\n').length, 2, `${args.join(' ')}: one line`);
    t.is(result.stdout, '');
  }
  t.is((await stack.admin('/consumers/sk-usage/key-auth')).body.data.length, before, 'no key added');
  t.is((await stack.admin('/consumers/sk-usage2')).status, 404, 'no consumer created');
});
