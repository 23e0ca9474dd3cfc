import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import { API_KEY_PATTERN } from '../../scripts/lib/api-keys.ts';
import { runCli } from '../helpers/cli.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';

// The provisioning CLI, run for real against the local gateway's Admin API; the keys it prints
// are then used through the gateway running kong.yml.
const test = anyTest as TestFn<{ stack: TestStack; cli: (args: string[], env?: NodeJS.ProcessEnv) => ReturnType<typeof runCli> }>;

test.before(async (t) => {
  const stack = await startStack();
  t.context.stack = stack;
  t.context.cli = (args, env = {}) => runCli(args, { KONG_ADMIN_URL: stack.gateway.adminUrl, ...env });
});
test.after.always(async (t) => {
  await t.context.stack?.dispose();
});

async function create(t: { context: { cli: (a: string[]) => ReturnType<typeof runCli> } }, username: string, ...extra: string[]) {
  const result = await t.context.cli(['create', '--username', username, '--json', ...extra]);
  if (result.code !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as { username: string; plan: string; key: string; limits: { minute: number; day: number } };
}

test('create prints one JSON object with the key; the key works at once with the plan limits', async (t) => {
  const { stack } = t.context;
  const issued = await create(t, 'cli-free', '--plan', 'free');
  t.like(issued, { username: 'cli-free', plan: 'free', limits: { minute: 60, day: 1000 } });
  t.regex(issued.key, API_KEY_PATTERN);
  const response = await stack.call('/v1/pets', { key: issued.key });
  t.is(response.status, 200);
  t.is(response.headers.get('x-ratelimit-limit'), '60');
  const consumer = await stack.admin('/consumers/cli-free');
  t.deepEqual(consumer.body.tags.sort(), ['petstore-consumer', 'plan:free']);
  t.false(consumer.body.tags.includes('animal-store'), "never kong.yml's select tag");
});

test('enterprise needs its limits; other plans refuse them', async (t) => {
  const missing = await t.context.cli(['create', '--username', 'cli-ent', '--plan', 'enterprise']);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /^error: plan enterprise has custom limits: give --minute N and --day N\n$/);
  const issued = await create(t, 'cli-ent', '--plan', 'enterprise', '--minute', '5000', '--day', '900000');
  const response = await t.context.stack.call('/v1/pets', { key: issued.key });
  t.is(response.headers.get('x-ratelimit-limit'), '5000');
});

test('set-plan changes the limits the gateway applies', async (t) => {
  const { stack, cli } = t.context;
  const issued = await create(t, 'cli-upgrade', '--plan', 'free');
  const result = await cli(['set-plan', 'cli-upgrade', '--plan', 'business']);
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout.trim(), 'cli-upgrade is now on plan business (1000/min, 100000/day)');
  const response = await stack.call('/v1/pets', { key: issued.key });
  t.is(response.headers.get('x-ratelimit-limit'), '1000');
  const show = JSON.parse((await cli(['show', 'cli-upgrade', '--json'])).stdout);
  t.is(show.plan, 'business');
});

test.serial('rotate-key: both keys work during the grace period, only the new one after it', async (t) => {
  const { stack, cli } = t.context;
  const first = await create(t, 'cli-rotate', '--plan', 'pro');
  const rotated = await cli(['rotate-key', 'cli-rotate', '--grace', '120', '--json']);
  t.is(rotated.code, 0, rotated.stderr);
  const second = JSON.parse(rotated.stdout);
  t.not(second.key, first.key);
  t.is((await stack.call('/v1/pets', { key: first.key })).status, 200);
  t.is((await stack.call('/v1/pets', { key: second.key })).status, 200);
  stack.clock.advance(121_000);
  t.is((await stack.call('/v1/pets', { key: first.key })).status, 401);
  t.is((await stack.call('/v1/pets', { key: second.key })).status, 200);
});

test('revoke-key: every key of the consumer answers 401', async (t) => {
  const { stack, cli } = t.context;
  const issued = await create(t, 'cli-revoke', '--plan', 'free');
  const result = await cli(['revoke-key', 'cli-revoke']);
  t.is(result.stdout.trim(), 'revoked 1 key(s) of cli-revoke');
  const response = await stack.call('/v1/pets', { key: issued.key });
  t.is(response.status, 401);
  t.is(response.body.code, 'invalid_api_key');
});

test('provisioned consumers survive a reload of kong.yml', async (t) => {
  const { stack } = t.context;
  const issued = await create(t, 'cli-survivor', '--plan', 'free');
  await stack.gateway.reload();
  t.is((await stack.call('/v1/pets', { key: issued.key })).status, 200);
});

test('create for an existing username fails with one line and changes nothing', async (t) => {
  const { cli } = t.context;
  await create(t, 'cli-twice', '--plan', 'free');
  const again = await cli(['create', '--username', 'cli-twice', '--plan', 'pro']);
  t.is(again.code, 1);
  t.is(again.stderr, 'error: consumer cli-twice already exists\n');
  t.is(again.stdout, '');
  t.is(JSON.parse((await cli(['show', 'cli-twice', '--json'])).stdout).plan, 'free');
});

test('a failure after the consumer was created rolls everything back', async (t) => {
  const { stack, cli } = t.context;
  // The local gateway refuses rate-limiting with policy redis: the plan step fails.
  const result = await cli(['create', '--username', 'cli-rollback', '--plan', 'free'], { RATE_LIMIT_POLICY: 'redis' });
  t.is(result.code, 1);
  t.regex(result.stderr, /^error: applying plan free: Kong answered 400: .*policy/);
  t.is(result.stderr.split('\n').filter(Boolean).length, 1);
  t.is((await stack.admin('/consumers/cli-rollback')).status, 404);
});

test('an unreachable Admin API is one clear line and exit code 1', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const result = await runCli(['list'], { KONG_ADMIN_URL: `http://127.0.0.1:${port}` });
  t.is(result.code, 1);
  t.is(result.stderr, `error: cannot reach the Kong Admin API at http://127.0.0.1:${port}: ECONNREFUSED\n`);
});

test('usage errors exit with 2', async (t) => {
  const { cli } = t.context;
  for (const args of [['create', '--plan', 'free'], ['create', '--username', 'u', '--plan', 'gold'], ['frobnicate'], ['create', '--bogus']]) {
    const result = await cli(args);
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr, /^error: .*\(see --help\)\n$/);
  }
  const help = await cli(['--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /rotate-key U \[--grace SECONDS\]/);
});

test('--admin-header reaches an Admin API behind a token-checking proxy', async (t) => {
  const { stack } = t.context;
  const target = new URL(stack.gateway.adminUrl);
  const proxy = createServer((req, res) => {
    if (req.headers['x-admin-token'] !== 's3cret') {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"message":"missing admin token"}');
      return;
    }
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => proxy.close());
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const refused = await runCli(['plans', 'sync'], { KONG_ADMIN_URL: url });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /Kong answered 401: missing admin token/);
  const allowed = await runCli(['list', '--admin-url', url, '--admin-header', 'X-Admin-Token: s3cret']);
  t.is(allowed.code, 0, allowed.stderr);
});

test('list, plans and plans sync', async (t) => {
  const { stack, cli } = t.context;
  await create(t, 'cli-list-a', '--plan', 'pro');
  const table = await cli(['list', '--plan', 'pro']);
  t.regex(table.stdout, /^USERNAME\s+PLAN\s+CUSTOM ID\s+CREATED/);
  t.regex(table.stdout, /cli-list-a\s+pro/);
  const json = JSON.parse((await cli(['list', '--plan', 'pro', '--json'])).stdout);
  t.true(json.every((c: { plan: string }) => c.plan === 'pro'));
  const plans = await cli(['plans']);
  t.regex(plans.stdout, /free\s+60\s+1000/);
  t.regex(plans.stdout, /enterprise\s+custom\s+custom/);
  // Drift a consumer's limits by hand, then let plans sync restore the catalogue's.
  const plugin = (await stack.admin('/consumers/cli-list-a/plugins')).body.data[0];
  await stack.admin(`/plugins/${plugin.id}`, { method: 'PATCH', json: { config: { minute: 1 } } });
  const synced = await cli(['plans', 'sync', '--plan', 'pro']);
  t.is(synced.code, 0, synced.stderr);
  t.regex(synced.stderr, /synced pro #\d+: /);
  t.is((await stack.admin(`/plugins/${plugin.id}`)).body.config.minute, 300);
});

test('keys never reach stderr', async (t) => {
  const result = await t.context.cli(['create', '--username', 'cli-secret', '--plan', 'free']);
  const key = /ask_[A-Za-z0-9_-]{43}/.exec(result.stdout)![0];
  t.false(result.stderr.includes(key));
  const show = await t.context.cli(['show', 'cli-secret', '--json']);
  t.false(show.stdout.includes(key), 'show never prints a key');
});
