import test from 'ava';
import { runCliInProcess } from '../helpers/cli.ts';
import { startTestCluster, type ClusterResponse, type TestCluster } from '../helpers/cluster.ts';
import { pollUntil } from '../helpers/poll.ts';

// Two data-plane nodes behind a real nginx balancer (round robin), counting in one real Redis:
// gateway/kong.yml as `npm run start:cluster` runs it (DECK_RATE_LIMIT_POLICY=redis). Kong users
// report N nodes allowing N times the limit with policy local (Kong/kong #6724): here the free
// plan's 60 a minute hold across both nodes, and the per-IP limit of keyless clients counts the
// client behind the balancer, not the balancer.
let cluster: TestCluster;

const EMPTY_UUID = '00000000-0000-0000-0000-000000000000';
const MINUTE = 60_000;

test.before(async () => {
  cluster = await startTestCluster();
});
test.after.always(async () => {
  await cluster?.dispose();
});

/** `count` requests through `send`, `concurrency` at a time. */
async function burst(count: number, concurrency: number, send: () => Promise<ClusterResponse>): Promise<ClusterResponse[]> {
  const results: ClusterResponse[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < count) {
        started += 1;
        results.push(await send());
      }
    }),
  );
  return results;
}

/** The next minute's start + 5 s on the shared test clock: a fresh window for every test. */
async function freshMinute(cluster: TestCluster): Promise<number> {
  const start = (Math.floor(cluster.clock.now() / MINUTE) + 1) * MINUTE;
  await cluster.clock.set(start + 5_000);
  return start;
}

test.serial('the control plane reports its role and both nodes', async (t) => {
  t.is((await cluster.admin('/')).body.configuration.role, 'control_plane');
  const nodes = (await cluster.admin('/clustering/data-planes')).body.data as Array<{ sync_status: string }>;
  t.is(nodes.length, 2);
  t.true(nodes.every((node) => node.sync_status === 'normal'));
  // Kong's server counters are its nginx's stub_status, which count the request asking
  // (kong/api/routes/health.lua:37-43): a control plane without a node counts its Admin API's own
  const before = (await cluster.admin('/status')).body.server as Record<string, number>;
  t.true(before.total_requests! >= 3, 'this test asked three times');
  t.true(before.connections_active! >= 1 && before.connections_writing! >= 1, 'the connection asking');
  t.is(before.connections_accepted, before.connections_handled);
  t.is(before.connections_reading, 0, 'docs/known-differences.md: Node does not tell reading from waiting');
  t.is(before.connections_active, before.connections_reading! + before.connections_writing! + before.connections_waiting!);
  const after = (await cluster.admin('/status')).body.server as Record<string, number>;
  t.is(after.total_requests, before.total_requests! + 1);
});

test.serial('a free key through the balancer: exactly 60 answers in the minute, then 429, from both nodes (sync_rate -1)', async (t) => {
  const minuteStart = await freshMinute(cluster);
  // the plan as the CLI writes it: counted where kong.yml's fallback counts (Redis)
  const created = await runCliInProcess(['create', '--username', 'free-alice', '--plan', 'free', '--json'], { KONG_ADMIN_URL: cluster.adminUrl });
  t.is(created.code, 0, created.stderr);
  const plan = (await cluster.admin('/consumers/free-alice/plugins')).body.data[0].config;
  t.like(plan, { minute: 60, policy: 'redis', sync_rate: -1 });
  const { key } = JSON.parse(created.stdout.trim().split('\n').pop()!) as { key: string };
  const consumerId = (await cluster.admin('/consumers/free-alice')).body.id as string;

  // 78 requests through the balancer, then one to each node directly: 60 served, 20 refused (a
  // 21st refusal would ban the key: kong.yml's edge plugin bans after more than 20 in a minute)
  const answers = await burst(78, 8, () => cluster.call('balancer', '/v1/pets', { key }));
  for (const target of [1, 2] as const) answers.push(await cluster.call(target, '/v1/pets', { key }));
  t.is(answers.at(-1)!.status, 429);
  t.is(answers.at(-2)!.status, 429);
  const served = answers.filter((res) => res.status !== 429);
  t.is(served.length, 60);
  t.true(answers.filter((res) => res.status === 429).every((res) => res.body.code === 'rate_limit_exceeded'));
  t.true(served.every((res) => res.status === 200));
  t.deepEqual([...new Set(answers.map((res) => res.status))].sort(), [200, 429]);
  const byNode = new Map<string, number>();
  for (const res of answers.slice(0, 78)) byNode.set(String(res.headers['x-balancer-upstream']), (byNode.get(String(res.headers['x-balancer-upstream'])) ?? 0) + 1);
  t.deepEqual([...byNode.values()], [39, 39], `round robin over both nodes: ${JSON.stringify([...byNode])}`);

  // Kong's key and count in Redis: every request counted, the refused ones too
  const counter = `ratelimit:${EMPTY_UUID}:${EMPTY_UUID}:${consumerId}:${minuteStart}:minute`;
  t.is(await cluster.redisCommand('GET', counter), '80');
  const ttl = (await cluster.redisCommand('TTL', counter)) as number;
  t.true(ttl > 0 && ttl <= 60, `the minute counter expires (TTL ${ttl})`);

  // the next minute (on the clock both nodes follow) starts over
  await freshMinute(cluster);
  t.is((await cluster.call('balancer', '/v1/pets', { key })).status, 200);
});

test.serial('with sync_rate > 0 the overshoot stays within the documented bound, then both nodes refuse', async (t) => {
  await freshMinute(cluster);
  const fallback = (await cluster.admin('/plugins?tags=animal-store')).body.data.find(
    (p: { name: string; consumer: unknown }) => p.name === 'rate-limiting' && p.consumer === null,
  );
  const limit = 60;
  const { key } = await cluster.provision('batched-bob', { minute: limit, policy: 'redis', redis: fallback.config.redis, sync_rate: 1 });
  const concurrency = 8;
  const startedAt = Date.now();
  const answers = await burst(300, concurrency, () => cluster.call('balancer', '/v1/pets', { key }));
  const elapsedMs = Date.now() - startedAt;
  const served = answers.filter((res) => res.status === 200).length;
  t.true(answers.every((res) => res.status === 200 || res.status === 429));
  // Each worker counts locally from the count it last read and adds its count to Redis every
  // sync_rate seconds: between reads it may admit the rest of the limit, and one more, since the
  // request whose INCR read the count is not in its local view (kong/plugins/rate-limiting/
  // policies/init.lua:429-435: usage = the count before, delta = -1, then +1). It reads again
  // only once its counts are in Redis, so over the window a worker admits at most limit + 1 less
  // what the others had synced: nodes × workers × (limit + 1) in all. (Kong itself can also lose
  // the counts made while a sync's commit waits, :205-217; the data plane does not, see
  // gateway/local/data-plane/lua/kong/plugins/README.md.)
  const bound = 2 * 1 * (limit + 1);
  t.true(served >= limit && served <= bound, `served ${served}, bound ${bound}`);
  t.log(`sync_rate 1 s, limit ${limit}, 2 nodes × 1 worker, 300 requests at ${concurrency} in flight over ${elapsedMs} ms: ${served} served (bound ${bound})`);
  // Spread over several syncs (100 requests a second for 2.5 s; sync timers run on real time),
  // each worker reads fresher counts: the overshoot shrinks.
  await freshMinute(cluster);
  const { key: paced } = await cluster.provision('batched-carol', { minute: limit, policy: 'redis', redis: fallback.config.redis, sync_rate: 1 });
  const pacedAnswers = await burst(250, 2, async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return cluster.call('balancer', '/v1/pets', { key: paced });
  });
  const pacedServed = pacedAnswers.filter((res) => res.status === 200).length;
  t.true(pacedServed >= limit && pacedServed <= bound, `paced: served ${pacedServed}, bound ${bound}`);
  t.log(`the same at 100 requests a second for 2.5 s: ${pacedServed} served`);

  // once both workers have synced, neither admits more
  await pollUntil(
    'both nodes refuse',
    async () => (await cluster.call(1, '/v1/pets', { key })).status === 429 && (await cluster.call(2, '/v1/pets', { key })).status === 429,
    { timeoutMs: 5_000, intervalMs: 200 },
  );
});

test.serial('behind the balancer the anonymous limit counts each client, and a forged X-Forwarded-For is not believed', async (t) => {
  await freshMinute(cluster);
  const alice = { localAddress: '127.0.0.3' };
  const bob = { localAddress: '127.0.0.4' };
  // kong.yml: 30 a minute per client IP for requests without a key
  for (let i = 0; i < 30; i++) t.is((await cluster.call('balancer', '/v1/pets', alice)).status, 401);
  const limited = await cluster.call('balancer', '/v1/pets', alice);
  t.is(limited.status, 429);
  t.is(limited.headers['x-ratelimit-limit'], '30');
  // another client behind the same balancer has its own bucket
  const other = await cluster.call('balancer', '/v1/pets', bob);
  t.is(other.status, 401);
  t.is(other.headers['x-ratelimit-remaining'], '29');
  // a client naming another address: the balancer appends the real one, which the node takes
  const forged = await cluster.call('balancer', '/v1/pets', { ...alice, headers: { 'x-forwarded-for': '198.51.100.7' } });
  t.is(forged.status, 429);
  // and a client reaching a node directly is not the balancer: its X-Forwarded-For is ignored
  const direct = await cluster.call(1, '/v1/pets', { localAddress: '127.0.0.5', headers: { 'x-forwarded-for': '127.0.0.3' } });
  t.is(direct.status, 401);
  t.is(direct.headers['x-ratelimit-remaining'], '29');
});

