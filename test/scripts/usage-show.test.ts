import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createClient } from 'redis';
import { counterKey, EMPTY_UUID } from '../../packages/usage/index.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { startFakeKongAdmin, type FakeKongAdmin } from '../helpers/fake-kong-admin.ts';
import { pollUntil } from '../helpers/poll.ts';
import { freePort } from '../../packages/node-runtime/free-port.js';

// `consumers show` adds the consumer's current minute and day when they can be read: from Redis,
// in Kong's rate-limiting key layout, when its plan plugin has policy redis. A real redis-server;
// the Admin API is Kong-shaped (the local gateway refuses policy redis, as it cannot run it).
let admin: FakeKongAdmin;
let redisPort: number;
let stopRedis: () => Promise<void>;

const PASSWORD = 'redis-s3cret';

test.before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'redis-'));
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--requirepass', PASSWORD], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const probe = createClient({ socket: { port, host: '127.0.0.1', reconnectStrategy: false }, password: PASSWORD });
  probe.on('error', () => undefined);
  await pollUntil('redis-server to accept connections', () =>
    probe.connect().then(
      () => true,
      () => false,
    ),
  );
  probe.destroy();
  admin = await startFakeKongAdmin();
  redisPort = port;
  stopRedis = async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
});
test.after.always(async () => {
  await admin?.close();
  await stopRedis?.();
});

/** Sets the consumer's counters for the current period and the next few seconds' one, so a boundary passing mid-test changes nothing. */
async function setCounters(port: number, database: number, consumerId: string, minute: number, day: number) {
  const client = createClient({ socket: { port, host: '127.0.0.1' }, password: PASSWORD, database });
  await client.connect();
  const plugin = { route: null, service: null };
  for (const at of [new Date(), new Date(Date.now() + 5000)]) {
    await client.set(counterKey(plugin, consumerId, 'minute', at), String(minute));
    await client.set(counterKey(plugin, consumerId, 'day', at), String(day));
  }
  client.destroy();
}

const redisPlan = (port: number, extra: Record<string, unknown> = {}) => ({
  minute: 60,
  day: 1000,
  policy: 'redis',
  redis: { host: '127.0.0.1', port, password: PASSWORD, ...extra },
});

test("the key is Kong's: empty route and service ids, the consumer id, the period's start in ms", (t) => {
  // kong/plugins/rate-limiting/policies/init.lua: get_local_key and get_service_and_route_ids;
  // kong/tools/timestamp.lua: get_timestamps (UTC, seconds floored, then minute, then day).
  const at = new Date('2030-01-01T12:34:56.789Z');
  const id = '9d5b2f0e-6a43-4c56-8a9b-0f4b2d0a7e11';
  t.is(counterKey({ route: null, service: null }, id, 'minute', at), `ratelimit:${EMPTY_UUID}:${EMPTY_UUID}:${id}:1893501240000:minute`);
  t.is(counterKey({ route: null, service: null }, id, 'day', at), `ratelimit:${EMPTY_UUID}:${EMPTY_UUID}:${id}:1893456000000:day`);
  const scoped = { route: { id: 'r0000000-0000-4000-8000-000000000001' }, service: { id: 's0000000-0000-4000-8000-000000000002' } };
  t.is(counterKey(scoped, id, 'minute', at), `ratelimit:r0000000-0000-4000-8000-000000000001:s0000000-0000-4000-8000-000000000002:${id}:1893501240000:minute`);
});

test('policy redis: used and remaining this minute and today, read from Redis', async (t) => {
  const alice = admin.addConsumer('show-redis', { plan: redisPlan(redisPort) });
  await setCounters(redisPort, 0, alice.id, 12, 340);
  const text = await runCliInProcess(['show', 'show-redis'], { KONG_ADMIN_URL: admin.url });
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /\n {2}minute {3}12 used, 48 remaining of 60 \(resets \d{4}-\d\d-\d\dT\d\d:\d\d:00Z\)\n/);
  t.regex(text.stdout, /\n {2}today {4}340 used, 660 remaining of 1000 \(resets \d{4}-\d\d-\d\dT00:00:00Z\)\n/);
  t.false(text.stdout.includes(PASSWORD));
  const json = JSON.parse((await runCliInProcess(['show', 'show-redis', '--json'], { KONG_ADMIN_URL: admin.url })).stdout);
  t.like(json.windows, { readable: true, policy: 'redis', minute: { used: 12, limit: 60, remaining: 48 }, day: { used: 340, limit: 1000, remaining: 660 } });
  const minuteEnd = Date.parse(json.windows.minute.resetsAt);
  t.is(minuteEnd % 60_000, 0);
  t.true(minuteEnd > Date.now() - 5000 && minuteEnd <= Date.now() + 65_000);
});

test('policy redis: a window that has not started counts 0; refused requests count, remaining stops at 0', async (t) => {
  const bob = admin.addConsumer('show-over', { plan: redisPlan(redisPort) });
  const none = JSON.parse((await runCliInProcess(['show', 'show-over', '--json'], { KONG_ADMIN_URL: admin.url })).stdout);
  t.like(none.windows, { readable: true, minute: { used: 0, remaining: 60 }, day: { used: 0, remaining: 1000 } });
  await setCounters(redisPort, 0, bob.id, 75, 75);
  const over = JSON.parse((await runCliInProcess(['show', 'show-over', '--json'], { KONG_ADMIN_URL: admin.url })).stdout);
  t.like(over.windows, { minute: { used: 75, remaining: 0 }, day: { used: 75, remaining: 925 } });
});

test("the plugin's Redis database and password are used", async (t) => {
  const carol = admin.addConsumer('show-db', { plan: redisPlan(redisPort, { database: 3 }) });
  await setCounters(redisPort, 3, carol.id, 7, 8);
  const json = JSON.parse((await runCliInProcess(['show', 'show-db', '--json'], { KONG_ADMIN_URL: admin.url })).stdout);
  t.like(json.windows, { minute: { used: 7 }, day: { used: 8 } });
  admin.addConsumer('show-wrong-password', { plan: redisPlan(redisPort, { password: 'nope' }) });
  const wrong = await runCliInProcess(['show', 'show-wrong-password'], { KONG_ADMIN_URL: admin.url });
  t.is(wrong.code, 0, 'the rest of show stands');
  t.regex(wrong.stdout, new RegExp(`\\n {2}windows {2}not readable: cannot read Redis at 127\\.0\\.0\\.1:${redisPort}: .*(WRONGPASS|invalid).*\\n`));
  t.false(wrong.stdout.includes('nope'));
});

test('RATE_LIMIT_REDIS_HOST and _PORT say where this machine reaches the Redis Kong uses', async (t) => {
  // Kong reaches it as redis:6379 on compose's network; this machine through a tunnel, say.
  const dave = admin.addConsumer('show-tunnel', { plan: { ...redisPlan(redisPort), redis: { host: 'redis.invalid', port: 6379, password: PASSWORD } } });
  await setCounters(redisPort, 0, dave.id, 5, 50);
  const direct = await runCliInProcess(['show', 'show-tunnel'], { KONG_ADMIN_URL: admin.url });
  t.regex(direct.stdout, /\n {2}windows {2}not readable: cannot read Redis at redis\.invalid:6379: ENOTFOUND\n/);
  const env = { KONG_ADMIN_URL: admin.url, RATE_LIMIT_REDIS_HOST: '127.0.0.1', RATE_LIMIT_REDIS_PORT: String(redisPort) };
  const tunnelled = await runCliInProcess(['show', 'show-tunnel', '--json'], env);
  t.like(JSON.parse(tunnelled.stdout).windows, { readable: true, minute: { used: 5 }, day: { used: 50 } });
});

test('Redis down: show says why the windows are missing, and still exits 0', async (t) => {
  const port = await freePort();
  admin.addConsumer('show-down', { plan: redisPlan(port) });
  const result = await runCliInProcess(['show', 'show-down'], { KONG_ADMIN_URL: admin.url });
  t.is(result.code, 0, result.stderr);
  t.true(result.stdout.includes(`\n  windows  not readable: cannot read Redis at 127.0.0.1:${port}: ECONNREFUSED\n`), result.stdout);
});

test('policy local (one node, the default) or cluster: not readable from outside, and show says so', async (t) => {
  admin.addConsumer('show-local');
  const local = await runCliInProcess(['show', 'show-local'], { KONG_ADMIN_URL: admin.url });
  t.is(local.code, 0, local.stderr);
  t.true(local.stdout.includes("\n  windows  not readable: policy local: the counters live in each Kong node's memory and are not readable from outside\n"));
  admin.addConsumer('show-cluster', { plan: { minute: 60, day: 1000, policy: 'cluster' } });
  const cluster = JSON.parse((await runCliInProcess(['show', 'show-cluster', '--json'], { KONG_ADMIN_URL: admin.url })).stdout);
  t.deepEqual(cluster.windows, {
    readable: false,
    policy: 'cluster',
    reason: "policy cluster: the counters live in Kong's database, which the Admin API does not expose",
  });
  admin.addConsumer('show-no-plan', { plan: null });
  const none = JSON.parse((await runCliInProcess(['show', 'show-no-plan', '--json'], { KONG_ADMIN_URL: admin.url })).stdout);
  t.deepEqual(none.windows, { readable: false, policy: null, reason: 'it has no rate-limiting plugin of its own' });
});
