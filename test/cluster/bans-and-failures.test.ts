import test from 'ava';
import { startTestCluster, type ClusterResponse, type TestCluster } from '../helpers/cluster.ts';
import { pollUntil } from '../helpers/poll.ts';

// The same cluster as shared-limits.test.ts (two nodes, balancer, Redis, kong.yml with policy
// redis): bans earned on one node hold on the other, a revoked key stops on both nodes when the
// Admin API answers, and a Redis that dies under load costs no 5xx and comes back shared.
let cluster: TestCluster;

const EMPTY_UUID = '00000000-0000-0000-0000-000000000000';
const MINUTE = 60_000;

test.before(async () => {
  cluster = await startTestCluster();
});
test.after.always(async () => {
  await cluster?.dispose();
});

async function freshMinute(cluster: TestCluster): Promise<number> {
  const start = (Math.floor(cluster.clock.now() / MINUTE) + 1) * MINUTE;
  await cluster.clock.set(start + 5_000);
  return start;
}

/** A plan counted where kong.yml's fallback counts (Redis), as the CLI writes one. */
async function redisPlan(cluster: TestCluster, limits: Record<string, number>): Promise<Record<string, unknown>> {
  const fallback = (await cluster.admin('/plugins?tags=animal-store')).body.data.find(
    (p: { name: string; consumer: unknown }) => p.name === 'rate-limiting' && p.consumer === null,
  );
  return { ...limits, policy: 'redis', redis: fallback.config.redis };
}

/** Refusals of `key` on `node` until it is banned in Redis; the refusals it took. */
async function earnBan(cluster: TestCluster, node: 1 | 2, key: string, digestKey: string): Promise<number> {
  let refusals = 0;
  while ((await cluster.redisCommand('EXISTS', digestKey)) === 0) {
    const res = await cluster.call(node, '/v1/pets', { key });
    if (res.status === 429) refusals += 1;
    if (refusals > 40) throw new Error('no ban after 40 refusals');
  }
  return refusals;
}

const banKeyOf = async (key: string) => {
  const { createHash } = await import('node:crypto');
  return `animal-store-edge:ban:${createHash('sha256').update(key).digest('hex')}`;
};

test.serial('a ban earned on node 1 is answered on node 2 and through the balancer', async (t) => {
  await freshMinute(cluster);
  const { key } = await cluster.provision('ban-mallory', await redisPlan(cluster, { minute: 1 }));
  t.is((await cluster.call(1, '/v1/pets', { key })).status, 200);
  const refusals = await earnBan(cluster, 1, key, await banKeyOf(key));
  t.true(refusals >= 21, `kong.yml: banned after more than 20 refusals (${refusals}, the last ones in flight)`);
  const banned = await cluster.call(2, '/v1/pets', { key });
  t.is(banned.status, 429);
  t.is(banned.body.code, 'api_key_banned');
  t.is(banned.headers['retry-after'], '900');
  t.is((await cluster.call('balancer', '/v1/pets', { key })).body.code, 'api_key_banned');
  t.true(cluster.logs.some((line) => /\[node-1\].*API key banned for 900 s .* consumer ban-mallory/.test(line)));
});

test.serial('a banned key revoked through the Admin API: 401 invalid_api_key on both nodes, not the ban', async (t) => {
  await freshMinute(cluster);
  const { key, credentialId } = await cluster.provision('ban-revoked', await redisPlan(cluster, { minute: 1 }));
  t.is((await cluster.call(1, '/v1/pets', { key })).status, 200);
  const banKey = await banKeyOf(key);
  await earnBan(cluster, 1, key, banKey);
  // node 1 holds the ban in its dict (its strike made it), node 2 too once it has read it in Redis
  for (const node of [1, 2] as const) t.is((await cluster.call(node, '/v1/pets', { key })).body.code, 'api_key_banned', `node ${node}`);

  t.is((await cluster.admin(`/consumers/ban-revoked/key-auth/${credentialId}`, { method: 'DELETE' })).status, 204);
  for (const node of [1, 2] as const) {
    const res = await cluster.call(node, '/v1/pets', { key });
    t.is(res.status, 401, `node ${node}`);
    t.is(res.body.code, 'invalid_api_key', `node ${node}`);
    t.is(res.headers['retry-after'], undefined, `node ${node}`);
  }
  t.is(await cluster.redisCommand('EXISTS', banKey), 1, 'the ban runs its course in Redis: it answers only while the key lives');
});

test.serial('a revoke through the Admin API: both nodes answer 401 as soon as the Admin API has answered', async (t) => {
  await freshMinute(cluster);
  const { key, credentialId } = await cluster.provision('revoke-trudy');
  for (const node of [1, 2] as const) t.is((await cluster.call(node, '/v1/pets', { key })).status, 200);
  const startedAt = Date.now();
  const revoked = await cluster.admin(`/consumers/revoke-trudy/key-auth/${credentialId}`, { method: 'DELETE' });
  const elapsedMs = Date.now() - startedAt;
  t.is(revoked.status, 204);
  // The control plane answers a write once every live node runs it (gateway/local/README.md; in
  // production it stops waiting after 1 s, here after 15 s, so that a loaded machine cannot make
  // this test lie): when the DELETE returns, both nodes report the configuration without the key.
  const nodes = (await cluster.admin('/clustering/data-planes')).body.data as Array<{ sync_status: string }>;
  t.deepEqual(nodes.map((node) => node.sync_status), ['normal', 'normal']);
  for (const node of [1, 2] as const) {
    const res = await cluster.call(node, '/v1/pets', { key });
    t.is(res.status, 401, `node ${node}`);
    t.is(res.body.code, 'invalid_api_key');
  }
  t.log(`DELETE of the credential answered in ${elapsedMs} ms, live on both nodes`);
});

test.serial('Redis killed under load: no 5xx, each node carries on alone and says so once; restarted: shared again', async (t) => {
  const minuteStart = await freshMinute(cluster);
  const keys = await Promise.all(
    ['load-a', 'load-b', 'load-c'].map(async (name) => (await cluster.provision(name, await redisPlan(cluster, { minute: 100_000 }))).key),
  );
  // a ban both nodes have seen before Redis goes: each keeps it in its dict
  const { key: bannedKey } = await cluster.provision('ban-oscar', await redisPlan(cluster, { minute: 1 }));
  await cluster.call(1, '/v1/pets', { key: bannedKey });
  await earnBan(cluster, 1, bannedKey, await banKeyOf(bannedKey));
  t.is((await cluster.call(2, '/v1/pets', { key: bannedKey })).body.code, 'api_key_banned');

  const statuses = new Map<number, number>();
  let stop = false;
  const load = Promise.all(
    Array.from({ length: 6 }, async (_, i) => {
      while (!stop) {
        let res: ClusterResponse;
        try {
          res = await cluster.call('balancer', '/v1/pets?limit=1', { key: keys[i % keys.length]! });
        } catch (error) {
          statuses.set(-1, (statuses.get(-1) ?? 0) + 1);
          t.log(`no answer: ${(error as Error).message}`);
          continue;
        }
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }),
  );
  const served = () => statuses.get(200) ?? 0;
  await pollUntil('load running', async () => served() > 50);
  await cluster.redis.kill();
  const beforeOutage = served();
  await pollUntil('load served while Redis is gone', async () => served() > beforeOutage + 300, { timeoutMs: 20_000 });
  // banned keys the nodes know stay banned without Redis
  for (const node of [1, 2] as const) t.is((await cluster.call(node, '/v1/pets', { key: bannedKey })).body.code, 'api_key_banned');

  await cluster.restartRedis();
  const afterRestart = served();
  await pollUntil('load served after the restart', async () => served() > afterRestart + 300, { timeoutMs: 20_000 });
  // each node's edge plugin tries Redis again within a second of its last failure, and says so
  const recovered = (name: string) => cluster.logs.some((line) => line.includes(`[${name}]`) && line.includes('answers again: bans are shared again'));
  await pollUntil('both nodes use Redis again', async () => recovered('node-1') && recovered('node-2'), { timeoutMs: 5_000 });
  stop = true;
  await load;

  t.deepEqual([...statuses.keys()].sort(), [200], `every answer a 200: ${JSON.stringify([...statuses])}`);
  // the edge plugin's warning: once per node (and interval, 60 s), however many requests met it
  for (const name of ['node-1', 'node-2']) {
    const warnings = cluster.logs.filter((line) => line.includes(`[${name}]`) && /Redis \S+ unreachable/.test(line));
    t.is(warnings.length, 1, `${name}: ${warnings.join('\n')}`);
  }
  // rate-limiting with fault_tolerant (Kong's default) served uncounted and logged it
  t.true(cluster.logs.some((line) => /failed to get usage/.test(line)));

  // counting is shared again: the restarted (empty) Redis counts requests from both nodes
  const consumerId = (await cluster.admin('/consumers/load-a')).body.id as string;
  const counter = `ratelimit:${EMPTY_UUID}:${EMPTY_UUID}:${consumerId}:${minuteStart}:minute`;
  const counted = Number(await cluster.redisCommand('GET', counter));
  for (const node of [1, 2] as const) t.is((await cluster.call(node, '/v1/pets', { key: keys[0]! })).status, 200);
  t.is(Number(await cluster.redisCommand('GET', counter)), counted + 2);
  // and bans: one earned on node 1 now is answered on node 2
  const { key } = await cluster.provision('ban-judy', await redisPlan(cluster, { minute: 1 }));
  await cluster.call(1, '/v1/pets', { key });
  await earnBan(cluster, 1, key, await banKeyOf(key));
  t.is((await cluster.call(2, '/v1/pets', { key })).body.code, 'api_key_banned');
  t.log(`answers during the run: ${JSON.stringify(Object.fromEntries(statuses))}`);
});
