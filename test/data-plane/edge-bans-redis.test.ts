import { createHash } from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { PLUGINS_DIR } from '../helpers/gateway-files.ts';
import { httpGet, type HttpResponse } from '../helpers/http-request.ts';
import { pollUntil } from '../helpers/poll.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import type { SnapshotInput } from '../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { BUNDLED_PLUGINS, configOf, plugin, setClock } from './plugins/kit.ts';

// animal-store-edge's ban store with policy redis (gateway/plugins/animal-store-edge/bans.lua) on
// two data-plane nodes that share one real redis-server: a ban earned on one node is answered
// on the other, strikes from both nodes add up, and while Redis is gone each node carries on with
// its own shared dict, says so once, and never answers 5xx for it.
const test = anyTest as TestFn<Record<string, never>>;

const NOON = Date.UTC(2030, 0, 1, 12, 0, 5);
const THRESHOLD = 4;

let upstream: Upstream;
let redis: RedisServer;
let nodes: TestNode[];

function edgeConfig(redisPort: number): Record<string, unknown> {
  return {
    key_header: 'apikey',
    realm: 'animal-store',
    ban_threshold: THRESHOLD,
    ban_window: 60,
    ban_duration: 900,
    dict_name: 'animal_store_edge',
    policy: 'redis',
    redis: { host: '127.0.0.1', port: redisPort, timeout: 2000, username: null, password: null, database: 0, ssl: false, ssl_verify: false, server_name: null },
  };
}

const USERS = ['mallory', 'trudy', 'eve', 'oscar', 'judy'] as const;
const keyOf = (user: string) => `key-of-${user}`;
const digest = (key: string) => createHash('sha256').update(key).digest('hex');

function snapshot(redisPort: number): SnapshotInput {
  return {
    services: [{ name: 'upstream', url: upstream.url }],
    routes: [{ name: 'all', service: 'upstream', paths: ['/'] }],
    consumers: USERS.map((username) => ({ username })),
    // Kong holds digests: the edge plugin hands key-auth the key's SHA-256
    keyauth_credentials: USERS.map((username) => ({ consumer: username, key: digest(keyOf(username)) })),
    plugins: [
      { name: 'animal-store-edge', config: edgeConfig(redisPort) },
      plugin('key-auth', {}, { key_names: ['apikey'], hide_credentials: true }),
      // one request a minute per consumer and node: every further one is a 429, i.e. a strike
      ...USERS.map((username) => plugin('rate-limiting', { consumer: username }, { minute: 1 })),
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream();
  redis = await startRedis();
  nodes = await Promise.all(
    [1, 2].map(() =>
      startTestNode({ plugins: [...BUNDLED_PLUGINS, 'animal-store-edge'], pluginsDir: PLUGINS_DIR, testClock: true, snapshot: snapshot(redis.port) }),
    ),
  );
  await Promise.all(nodes.map((node) => setClock(node, NOON)));
});

test.after.always(async () => {
  await Promise.all((nodes ?? []).map((node) => node.dispose()));
  await redis?.stop();
  await upstream?.close();
});

const call = (node: TestNode, user: string): Promise<HttpResponse> =>
  httpGet(node.url('/pets'), { headers: { authorization: `Bearer ${keyOf(user)}` } });

const banKey = (user: string) => `animal-store-edge:ban:${digest(keyOf(user))}`;
const strikesKey = (user: string) => `animal-store-edge:strikes:${digest(keyOf(user))}`;

async function strikes(user: string): Promise<number> {
  return Number((await redis.command('HGET', strikesKey(user), 'count')) ?? 0);
}

test.serial('a ban earned on node 1 is answered on node 2, with the consumer it belongs to', async (t) => {
  const [one, two] = nodes as [TestNode, TestNode];
  t.is((await call(one, 'mallory')).status, 200);
  for (let i = 1; i <= THRESHOLD + 1; i++) {
    const res = await call(one, 'mallory');
    t.is(res.json?.code, 'rate_limit_exceeded', `429 number ${i}`);
    // strikes are recorded by a timer once the 429 is sent: wait for each, so the count is exact
    if (i <= THRESHOLD) await pollUntil(`strike ${i} in Redis`, async () => (await strikes('mallory')) === i);
  }
  await pollUntil('the ban in Redis', async () => (await redis.command('EXISTS', banKey('mallory'))) === 1);

  const banned = await call(two, 'mallory');
  t.is(banned.status, 429);
  t.is(banned.json.code, 'api_key_banned');
  t.is(banned.headers['retry-after'], '900');
  t.is(banned.headers['x-ratelimit-limit'], '1');
  t.is(banned.headers['x-ratelimit-remaining'], '0');
  t.is(banned.headers['x-ratelimit-reset'], String(Math.floor(NOON / 1000) + 900));

  // until (plugin clock), the limit it carried, and the username: the record a metrics label reads
  t.is(await redis.command('GET', banKey('mallory')), `${Math.floor(NOON / 1000) + 900}:1:mallory`);
  const ttl = (await redis.command('TTL', banKey('mallory'))) as number;
  t.true(ttl > 890 && ttl <= 900, `the ban key expires with the ban (TTL ${ttl})`);
  t.is(await redis.command('EXISTS', strikesKey('mallory')), 0, 'the strikes go once the key is banned');
  const keys = (await redis.command('KEYS', '*')) as string[];
  t.false(keys.some((key) => key.includes(keyOf('mallory'))), 'Redis holds digests, never keys');
  // nginx's log comes through its stderr pipe, possibly after the answers above
  await pollUntil('the ban line', async () => one.logsMatching(/API key banned for 900 s after repeated 429s: consumer mallory/).length > 0);
  t.is(one.logsMatching(/API key banned for 900 s after repeated 429s: consumer mallory/).length, 1);
});

test.serial('strikes on both nodes add up to one ban', async (t) => {
  const [one, two] = nodes as [TestNode, TestNode];
  t.is((await call(one, 'trudy')).status, 200);
  t.is((await call(two, 'trudy')).status, 200);
  for (let i = 1; i <= THRESHOLD; i++) {
    t.is((await call(i % 2 ? one : two, 'trudy')).status, 429);
    await pollUntil(`strike ${i}`, async () => (await strikes('trudy')) === i);
  }
  const ttl = (await redis.command('TTL', strikesKey('trudy'))) as number;
  t.true(ttl > 50 && ttl <= 60, `strikes expire with the window (TTL ${ttl})`);
  t.is((await call(one, 'trudy')).json.code, 'rate_limit_exceeded');
  await pollUntil('the ban', async () => (await redis.command('EXISTS', banKey('trudy'))) === 1);
  t.is((await call(two, 'trudy')).json.code, 'api_key_banned');
  t.is((await call(one, 'trudy')).json.code, 'api_key_banned');
});

test.serial('the window follows the plugin clock: 429s further apart than ban_window do not ban', async (t) => {
  const [one] = nodes as [TestNode];
  await call(one, 'eve');
  for (let i = 1; i <= THRESHOLD; i++) {
    t.is((await call(one, 'eve')).status, 429);
    await pollUntil(`strike ${i}`, async () => (await strikes('eve')) === i);
  }
  // the clock moves past the window: the next 429 starts a new one instead of banning
  await Promise.all(nodes.map((node) => setClock(node, NOON + 61_000)));
  t.teardown(() => Promise.all(nodes.map((node) => setClock(node, NOON))));
  await call(one, 'eve');
  t.is((await call(one, 'eve')).status, 429);
  await pollUntil('a new window', async () => (await strikes('eve')) === 1);
  t.is(await redis.command('EXISTS', banKey('eve')), 0);
});

test.serial('Redis gone: each node bans on its own, warns once, never a 5xx; Redis back: shared again', async (t) => {
  const [one, two] = nodes as [TestNode, TestNode];
  await redis.kill();
  const warnings = (node: TestNode) => node.logsMatching(/Redis 127\.0\.0\.1:\d+;0 unreachable/).length;

  t.is((await call(one, 'oscar')).status, 200);
  t.is((await call(two, 'oscar')).status, 200);
  const statuses: number[] = [];
  for (let i = 0; i < THRESHOLD + 1; i++) statuses.push((await call(one, 'oscar')).status);
  t.deepEqual(statuses, Array(THRESHOLD + 1).fill(429));
  // node 1 counted its strikes in its own dict and banned; node 2 knows nothing of it
  await pollUntil('node 1 bans on its own', async () => (await call(one, 'oscar')).json?.code === 'api_key_banned');
  t.is((await call(two, 'oscar')).json.code, 'rate_limit_exceeded');
  await pollUntil('the ban line', async () => one.logsMatching(/API key banned .* consumer oscar/).length > 0);
  t.is(one.logsMatching(/API key banned .* consumer oscar/).length, 1);
  // the failure is said once per node and interval, however many requests met it
  t.is(warnings(one), 1);
  t.is(warnings(two), 1);
  t.deepEqual([...one.logs, ...two.logs].filter((line) => /\[(error|crit|alert|emerg)\]/.test(line) && /animal-store-edge|bans\.lua/.test(line)), []);

  await redis.restart();
  // Each node tries Redis again at most REDIS_RETRY_AFTER (1 s) after its last failure, and says
  // so once it answers. A key nobody has (401) probes it without striking.
  for (const node of [one, two]) {
    await pollUntil(
      'the node uses Redis again',
      async () => {
        t.is((await httpGet(node.url('/pets'), { headers: { authorization: 'Bearer nobody-has-this' } })).status, 401);
        return node.logsMatching(/answers again: bans are shared again/).length === 1;
      },
      { timeoutMs: 5_000, intervalMs: 50 },
    );
  }
  t.is((await call(one, 'judy')).status, 200);
  t.is((await call(two, 'judy')).status, 200);
  for (let i = 1; i <= THRESHOLD + 1; i++) {
    t.is((await call(one, 'judy')).json.code, 'rate_limit_exceeded');
    if (i <= THRESHOLD) await pollUntil(`strike ${i} in Redis`, async () => (await strikes('judy')) === i);
  }
  await pollUntil('the ban in Redis', async () => (await redis.command('EXISTS', banKey('judy'))) === 1);
  t.is((await call(two, 'judy')).json.code, 'api_key_banned');
  t.is(configOf('rate-limiting').policy, 'local', 'the rate limits here are per node: only bans use Redis');
});
