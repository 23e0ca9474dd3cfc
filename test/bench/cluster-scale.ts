import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startBackend } from '../../backend/src/index.ts';
import { startCluster, type RunningCluster } from '../../gateway/local/index.ts';
import { GATEWAY_DIR } from '../../gateway/local/index.ts';
import { generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';

/**
 * Scale-out figures (issue 21), measured in one run on this machine: two data-plane nodes behind
 * the nginx balancer against one node reached directly, and the redis policy (kong.yml with
 * DECK_RATE_LIMIT_POLICY=redis: rate-limiting counts in Redis, the edge plugin checks bans there)
 * against local. Two clusters run side by side (gateway/local/cmd/cluster.ts: Redis, control
 * plane, two nodes of one worker each, balancer), one per policy; the scenarios alternate in
 * rounds so a burst of someone else's work falls on each alike. Every request carries a key whose
 * plan never runs out, so what is measured is the whole chain answering 200.
 *
 * Besides req/s and latency, the CPU the gateway spent per request: the nodes' nginx (master and
 * workers), the balancer's nginx, and redis-server (/proc, user + system), which is steadier than
 * req/s on a shared 2-core machine where the load generator competes for the same cores.
 *
 *   npx tsx test/bench/cluster-scale.ts [--seconds 5] [--rounds 3] [--connections 32] [--json]
 */

interface ScenarioFigures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU µs per request: data-plane nodes, balancer, Redis, and their sum. */
  cpu: { nodes: number; balancer: number; redis: number; total: number };
}

export interface ClusterScaleFigures {
  scenarios: ScenarioFigures[];
  /** req/s of two nodes behind the balancer over one node directly (redis policy). */
  twoNodesOverOne: number;
  /** Gateway CPU µs per request the redis policy adds to a node (one node directly). */
  redisCpuPerRequest: number;
  /** p50 latency the redis policy adds (one node directly), ms. */
  redisLatencyMs: number;
}

function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** utime + stime of a process and its children (an nginx master's workers), µs. */
function treeCpuMicros(pid: number): number {
  const stat = (p: number) => readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const own = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) * 10_000;
  let total = own(stat(pid));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = stat(Number(entry));
      if (Number(fields[1]) === pid) total += own(fields);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

interface Target {
  name: string;
  url: string;
  key: string;
  cluster: RunningCluster;
  /** Whether the balancer's and both nodes' CPU counts (through the balancer) or node 1's only. */
  viaBalancer: boolean;
}

async function runOnce(target: Target, seconds: number, connections: number) {
  const nodePids = target.viaBalancer ? target.cluster.nodes.map((node) => node.pid) : [target.cluster.nodes[0]!.pid];
  const cpu = () => ({
    nodes: nodePids.reduce((sum, pid) => sum + treeCpuMicros(pid), 0),
    balancer: target.viaBalancer ? treeCpuMicros(target.cluster.balancer.pid) : 0,
    redis: treeCpuMicros(target.cluster.redis.pid),
  });
  const before = cpu();
  const result = await autocannon({
    url: `${target.url}/v1/pets?limit=1`,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${target.key}` },
    workers: 1,
  });
  const after = cpu();
  return {
    result,
    cpu: { nodes: after.nodes - before.nodes, balancer: after.balancer - before.balancer, redis: after.redis - before.redis },
  };
}

async function provisionUnlimited(cluster: RunningCluster, username: string): Promise<string> {
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${cluster.adminUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<{ config?: Record<string, unknown> }>;
  };
  await admin('/consumers', { username, tags: ['petstore-consumer'] });
  const key = generateApiKey();
  await admin(`/consumers/${username}/key-auth`, storedCredential(key, ['petstore-consumer']));
  // a plan that never runs out, counted where kong.yml's fallback counts (as the CLI writes plans)
  type PluginPage = { data: Array<{ name: string; consumer: unknown; config: Record<string, unknown> }> };
  const plugins = (await (await fetch(`${cluster.adminUrl}/plugins?tags=animal-store`)).json()) as PluginPage;
  const fallback = plugins.data.find((p) => p.name === 'rate-limiting' && p.consumer === null)!;
  const counters = fallback.config.policy === 'redis' ? { policy: 'redis', redis: fallback.config.redis } : { policy: 'local' };
  await admin(`/consumers/${username}/plugins`, { name: 'rate-limiting', config: { minute: 1_000_000_000, limit_by: 'consumer', ...counters } });
  return key;
}

export async function measureClusterScale(
  options: { seconds?: number; rounds?: number; connections?: number } = {},
): Promise<ClusterScaleFigures> {
  const { seconds = 5, rounds = 3, connections = 32 } = options;
  const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-'));
  const backend = await startBackend({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'backend') });
  const loopback = { host: '127.0.0.1', port: 0 };
  const clusters: RunningCluster[] = [];
  try {
    for (const policy of ['redis', 'local']) {
      progress(`starting a cluster with policy ${policy}`);
      clusters.push(
        await startCluster({
          dir: join(dir, policy),
          configFile: join(GATEWAY_DIR, 'kong.yml'),
          pluginsDir: join(GATEWAY_DIR, 'plugins'),
          adminPort: 0,
          balancer: loopback,
          clusterListen: loopback,
          nodes: [loopback, loopback],
          redis: loopback,
          env: { DECK_ANIMAL_STORE_BACKEND_URL: backend.url, DECK_RATE_LIMIT_POLICY: policy },
          node: { workerProcesses: 1, sharedDicts: ['animal_store_edge 10m'], logLevel: 'notice' },
          log: () => undefined,
        }),
      );
    }
    const [redisCluster, localCluster] = clusters as [RunningCluster, RunningCluster];
    const redisKey = await provisionUnlimited(redisCluster, 'bench-redis');
    const localKey = await provisionUnlimited(localCluster, 'bench-local');
    const targets: Target[] = [
      { name: 'redis: 2 nodes behind the balancer', url: redisCluster.balancer.url, key: redisKey, cluster: redisCluster, viaBalancer: true },
      { name: 'redis: 1 node directly', url: redisCluster.nodes[0]!.proxyUrl, key: redisKey, cluster: redisCluster, viaBalancer: false },
      { name: 'local: 2 nodes behind the balancer', url: localCluster.balancer.url, key: localKey, cluster: localCluster, viaBalancer: true },
      { name: 'local: 1 node directly', url: localCluster.nodes[0]!.proxyUrl, key: localKey, cluster: localCluster, viaBalancer: false },
    ];
    progress('warm-up');
    for (const target of targets) await runOnce(target, 1, connections);

    const totals = targets.map(() => ({
      requests: 0, errors: 0, seconds: 0, nodes: 0, balancer: 0, redis: 0, p50: [] as number[], p99: [] as number[],
    }));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? targets.map((_, i) => i) : targets.map((_, i) => targets.length - 1 - i);
      for (const i of order) {
        const { result, cpu } = await runOnce(targets[i]!, seconds, connections);
        const total = totals[i]!;
        total.requests += result.requests.total;
        total.errors += result.errors + result.timeouts + result.non2xx;
        total.seconds += seconds;
        total.nodes += cpu.nodes;
        total.balancer += cpu.balancer;
        total.redis += cpu.redis;
        total.p50.push(result.latency.p50);
        total.p99.push(result.latency.p99);
        progress(`round ${round + 1}: ${targets[i]!.name}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms`);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const perRequest = (micros: number, requests: number) => (requests === 0 ? 0 : Math.round((micros / requests) * 10) / 10);
    const scenarios: ScenarioFigures[] = targets.map((target, i) => {
      const total = totals[i]!;
      const nodes = perRequest(total.nodes, total.requests);
      const balancer = perRequest(total.balancer, total.requests);
      const redis = perRequest(total.redis, total.requests);
      return {
        name: target.name,
        rps: Math.round(total.requests / total.seconds),
        p50: median(total.p50),
        p99: median(total.p99),
        errors: total.errors,
        cpu: { nodes, balancer, redis, total: Math.round((nodes + balancer + redis) * 10) / 10 },
      };
    });
    const [twoRedis, oneRedis, , oneLocal] = scenarios as [ScenarioFigures, ScenarioFigures, ScenarioFigures, ScenarioFigures];
    return {
      scenarios,
      twoNodesOverOne: Math.round((twoRedis.rps / oneRedis.rps) * 100) / 100,
      redisCpuPerRequest: Math.round((oneRedis.cpu.nodes + oneRedis.cpu.redis - oneLocal.cpu.nodes) * 10) / 10,
      redisLatencyMs: Math.round((oneRedis.p50 - oneLocal.p50) * 100) / 100,
    };
  } finally {
    for (const cluster of clusters.reverse()) await cluster.close();
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const flag = (name: string, fallback: number) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? Number(process.argv[at + 1]) : fallback;
  };
  const figures = await measureClusterScale({ seconds: flag('--seconds', 5), rounds: flag('--rounds', 3), connections: flag('--connections', 32) });
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(figures));
  } else {
    const pad = (value: string | number, width: number) => String(value).padStart(width);
    console.log(`${'scenario'.padEnd(38)} ${pad('req/s', 7)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('errors', 7)}  CPU µs/req: nodes + balancer + redis = total`);
    for (const s of figures.scenarios) {
      const cpu = `${s.cpu.nodes} + ${s.cpu.balancer} + ${s.cpu.redis} = ${s.cpu.total}`;
    console.log(`${s.name.padEnd(38)} ${pad(s.rps, 7)} ${pad(s.p50, 7)} ${pad(s.p99, 7)} ${pad(s.errors, 7)}  ${cpu}`);
    }
    console.log(`two nodes behind the balancer / one node (redis): ${figures.twoNodesOverOne}`);
    console.log(`the redis policy's cost on one node: +${figures.redisCpuPerRequest} µs CPU per request (node + Redis), +${figures.redisLatencyMs} ms p50`);
  }
}
