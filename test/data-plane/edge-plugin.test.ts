import { createHash } from 'node:crypto';
import net from 'node:net';
import anyTest, { type TestFn } from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { PLUGINS_DIR } from '../helpers/gateway-files.ts';
import { httpGet, type HttpResponse } from '../helpers/http-request.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import type { SnapshotInput } from '../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { BUNDLED_PLUGINS, logged, plugin, setClock } from './plugins/kit.ts';

// animal-store-edge (gateway/plugins/animal-store-edge/) on a data-plane node with the test
// clock: X-RateLimit-Reset against the time rate-limiting counted the request at, and the Redis
// ban store's configurations and failures that must never cost an error response or more than
// one redis.timeout.
const test = anyTest as TestFn<Record<string, never>>;

const NOON = Date.UTC(2030, 0, 1, 12, 0, 5); // 12:00:05
const MINUTE_END = Math.floor(Date.UTC(2030, 0, 1, 12, 1, 0) / 1000);
const HUNG_TIMEOUT_MS = 500;

let upstream: Upstream;
let redis: RedisServer;
let hungRedis: RedisServer;
let slowRedis: net.Server;
let droppingRedis: net.Server;
let droppingConnections = 0;
let node: TestNode;

const USERS = ['alice', 'bob', 'carol', 'dave'] as const;
const keyOf = (user: string) => `key-of-${user}`;
const digest = (key: string) => createHash('sha256').update(key).digest('hex');

// The plugin clock, as the tests move it: the upstream and the fake Redis move it further while
// a request waits on them.
let clockMs = NOON;
async function moveClock(ms: number): Promise<void> {
  clockMs += ms;
  await setClock(node, clockMs);
}

/**
 * A Redis that answers every command (one per packet: the plugin sends no pipelines) as an absent
 * key, or whatever `onCommand` does with the connection's socket, its number and the command's.
 */
function startFakeRedis(onCommand: (socket: net.Socket, connection: number, command: number) => void): Promise<net.Server> {
  let connections = 0;
  const server = net.createServer((socket) => {
    const connection = ++connections;
    let commands = 0;
    socket.on('data', () => onCommand(socket, connection, ++commands));
    socket.on('error', () => {});
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const ABSENT = '$-1\r\n';
// moves the clock by ADVANCE_MS before it answers (a slow Redis)
const ADVANCE_MS = 3_000;
const startSlowRedis = () => startFakeRedis((socket) => void moveClock(ADVANCE_MS).then(() => socket.write(ABSENT)));
// closes its first connection at that connection's second command (a Redis restarted meanwhile)
const startDroppingRedis = () =>
  startFakeRedis((socket, connection, command) => {
    droppingConnections = connection;
    if (connection === 1 && command === 2) socket.destroy();
    else socket.write(ABSENT);
  });
const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

function redisConfig(port: number | null, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { host: '127.0.0.1', port, timeout: 2000, username: null, password: null, database: 0, ssl: false, ssl_verify: false, server_name: null, ...overrides };
}

function edge(route: string, extra: Record<string, unknown> = {}) {
  return {
    name: 'animal-store-edge',
    route,
    config: { key_header: 'apikey', realm: 'animal-store', ban_threshold: 20, ban_window: 60, ban_duration: 900, dict_name: 'animal_store_edge', policy: 'local', ...extra },
  };
}

function snapshot(): SnapshotInput {
  const routes = ['local', 'redis-wait', 'port-null', 'database-null', 'timeout-null', 'hung', 'pool-closed'];
  const redisPort = redis.port;
  return {
    services: [{ name: 'upstream', url: upstream.url }],
    routes: routes.map((name) => ({ name, service: 'upstream', hosts: [`${name}.test`] })),
    consumers: USERS.map((username) => ({ username })),
    keyauth_credentials: USERS.map((username) => ({ consumer: username, key: digest(keyOf(username)) })),
    plugins: [
      edge('local'),
      edge('redis-wait', { policy: 'redis', redis: redisConfig(portOf(slowRedis)) }),
      edge('port-null', { policy: 'redis', redis: redisConfig(null) }),
      edge('database-null', { policy: 'redis', redis: redisConfig(redisPort, { database: null }) }),
      edge('timeout-null', { policy: 'redis', redis: redisConfig(redisPort, { timeout: null }) }),
      edge('hung', { policy: 'redis', redis: redisConfig(hungRedis.port, { timeout: HUNG_TIMEOUT_MS }) }),
      edge('pool-closed', { policy: 'redis', redis: redisConfig(portOf(droppingRedis)) }),
      plugin('key-auth', {}, { key_names: ['apikey'], hide_credentials: true }),
      plugin('rate-limiting', {}, { minute: 100, hour: 1000 }),
    ],
  };
}

test.before(async () => {
  // /advance/<ms>: the upstream moves the plugin clock by <ms> before it answers (a slow backend)
  upstream = await startUpstream(async (req, res) => {
    const advance = /^\/advance\/(\d+)$/.exec(req.url);
    if (advance) await moveClock(Number(advance[1]));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  [redis, hungRedis, slowRedis, droppingRedis] = await Promise.all([startRedis(), startRedis(), startSlowRedis(), startDroppingRedis()]);
  node = await startTestNode({ plugins: [...BUNDLED_PLUGINS, 'animal-store-edge'], pluginsDir: PLUGINS_DIR, testClock: true, snapshot: snapshot() });
  await setClock(node, clockMs);
});

test.after.always(async () => {
  await node?.dispose();
  const close = (server: net.Server | undefined) => new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await Promise.all([redis?.stop(), hungRedis?.stop(), close(slowRedis), close(droppingRedis)]);
  await upstream?.close();
});

const call = (route: string, user: string, path = '/pets'): Promise<HttpResponse> =>
  httpGet(node.url(path), { headers: { host: `${route}.test`, authorization: `Bearer ${keyOf(user)}` } });

test.serial('X-RateLimit-Reset is the end of the window the request was counted in, however long the upstream took', async (t) => {
  // kong/plugins/rate-limiting/handler.lua:127,181: RateLimit-Reset counts from ngx.time() in
  // rate-limiting's access; the answer leaves 7 s (a stopped backend), then 45 s (a 504's wait) later
  for (const wait of [7_000, 45_000]) {
    await setClock(node, (clockMs = NOON));
    const res = await call('local', 'alice', `/advance/${wait}`);
    t.is(res.status, 200);
    t.is(res.headers['ratelimit-reset'], '55');
    t.is(res.headers['x-ratelimit-reset'], String(MINUTE_END), `the upstream took ${wait} ms`);
  }
  // an answer that leaves in the next minute still names the window it was counted in
  await setClock(node, (clockMs = NOON));
  t.is((await call('local', 'alice', '/advance/70000')).headers['x-ratelimit-reset'], String(MINUTE_END));
});

test.serial('X-RateLimit-Reset after the edge waited on Redis in access: rate-limiting counted after the wait', async (t) => {
  // The fake Redis moves the clock 3 s during the ban check (12:00:05 -> 12:00:08): rate-limiting
  // then counts at 12:00:08 (RateLimit-Reset 52), the upstream moves it 7 s more.
  await setClock(node, (clockMs = NOON));
  const res = await call('redis-wait', 'bob', '/advance/7000');
  t.is(res.status, 200);
  t.is(res.headers['ratelimit-reset'], '52');
  t.is(res.headers['x-ratelimit-reset'], String(MINUTE_END));
});

test.serial('redis.port, redis.database or redis.timeout null (Kong\'s DAO hands the handler nil): the schema defaults, never a 500', async (t) => {
  await setClock(node, (clockMs = NOON));
  // bans in Redis database 0 (the default database), read with the default timeout
  const until = Math.floor(NOON / 1000) + 900;
  await redis.command('SET', `animal-store-edge:ban:${digest(keyOf('carol'))}`, `${until}:100:carol`);
  await redis.command('SET', `animal-store-edge:ban:${digest(keyOf('dave'))}`, `${until}:100:dave`);
  const databaseNull = await call('database-null', 'carol');
  t.is(databaseNull.status, 429);
  t.is(databaseNull.json?.code, 'api_key_banned');
  const timeoutNull = await call('timeout-null', 'dave');
  t.is(timeoutNull.status, 429);
  t.is(timeoutNull.json?.code, 'api_key_banned');
  // port null: 6379, rate-limiting's default (whatever answers there, the request goes on)
  const portNull = await call('port-null', 'alice');
  t.is(portNull.status, 200);
  t.deepEqual(node.logsMatching(/\[error\].*(animal-store-edge|bans\.lua)/), []);
});

test.serial('a hung Redis costs a request one redis.timeout, not a retry on a second connection', async (t) => {
  await setClock(node, (clockMs = NOON));
  // a first check leaves a pooled connection, which the hung Redis then never answers on
  t.is((await call('hung', 'nobody')).status, 401);
  hungRedis.pause();
  t.teardown(() => hungRedis.resume());
  const started = Date.now();
  const res = await call('hung', 'nobody');
  const elapsed = Date.now() - started;
  t.is(res.status, 401);
  t.true(elapsed >= HUNG_TIMEOUT_MS, `it waited on Redis (${elapsed} ms)`);
  t.true(elapsed < 2 * HUNG_TIMEOUT_MS, `one timeout of ${HUNG_TIMEOUT_MS} ms, not two (${elapsed} ms)`);
  const warning = new RegExp(`Redis 127\\.0\\.0\\.1:${hungRedis.port};0 unreachable \\(check: timeout\\)`);
  await logged(node, warning);
  t.is(node.logsMatching(warning).length, 1);
});

test.serial('a pooled connection that Redis closed (a restart) is tried again on a fresh one: no failure, no warning', async (t) => {
  await setClock(node, (clockMs = NOON));
  t.is((await call('pool-closed', 'nobody')).status, 401);
  t.is(droppingConnections, 1);
  t.is((await call('pool-closed', 'nobody')).status, 401);
  t.is(droppingConnections, 2, 'the check went on on a second connection');
  t.deepEqual(node.logsMatching(new RegExp(`Redis 127\\.0\\.0\\.1:${portOf(droppingRedis)};0 unreachable`)), []);
});
