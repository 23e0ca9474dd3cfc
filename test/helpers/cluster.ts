import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, type RunningCluster } from '../../gateway/local/index.ts';
import { startBackend, type RunningBackend } from '../../backend/src/index.ts';
import { generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';
import { ManualClock } from './clock.ts';
import { request, type JsonResponse } from './backend.ts';
import { setDataPlaneClock } from './gateway.ts';
import { GATEWAY_CONFIG, PLUGINS_DIR } from './gateway-files.ts';
import { redisCommands, type RespValue } from './redis.ts';

export interface ClusterResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

interface CallOptions {
  key?: string;
  method?: string;
  headers?: Record<string, string>;
  /** The client's own address (a loopback address: 127.0.0.3, …), to be a different client. */
  localAddress?: string;
}

export interface TestCluster extends RunningCluster {
  backend: RunningBackend;
  clock: ManualClock;
  /** The control plane's log lines, the nodes', the balancer's and Redis', as `level: message`. */
  logs: string[];
  /** A request through the balancer (`target` 'balancer') or to node 1 or 2 directly. */
  call(target: 'balancer' | 1 | 2, path: string, options?: CallOptions): Promise<ClusterResponse>;
  admin(path: string, init?: RequestInit & { json?: unknown }): Promise<JsonResponse>;
  /** A consumer with a key (Kong holds its digest) and a plan plugin when `limits`, through the Admin API. */
  provision(username: string, limits?: Record<string, unknown>): Promise<{ key: string; consumerId: string; credentialId: string }>;
  /** One command on the cluster's Redis (a fresh connection). */
  redisCommand(...args: (string | number)[]): Promise<RespValue>;
  dispose(): Promise<void>;
}

// Keepalive per client address, as real clients keep their connections.
const agents = new Map<string, Agent>();
function agentFor(localAddress: string | undefined): Agent {
  const name = localAddress ?? '';
  let agent = agents.get(name);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 64, ...(localAddress ? { localAddress } : {}) });
    agents.set(name, agent);
  }
  return agent;
}

function call(base: string, path: string, options: CallOptions = {}): Promise<ClusterResponse> {
  const url = new URL(path, base);
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method: options.method ?? 'GET', headers, agent: agentFor(options.localAddress), timeout: 15_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode!, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${path}: no answer within 15 s`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * `npm run start:cluster`'s topology on ephemeral loopback ports, in a directory of its own: a
 * real redis-server, the control plane (role control_plane) running gateway/kong.yml with policy
 * redis, two data-plane nodes (one worker each, test clock on, both following `clock`, each with
 * its Status API), the nginx balancer in front, and a backend. `env` adds to kong.yml's DECK_ variables.
 */
export async function startTestCluster(options: { env?: Record<string, string>; clock?: ManualClock } = {}): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-'));
  const backend = await startBackend({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'backend') });
  const clock = options.clock ?? new ManualClock(Date.UTC(2030, 0, 1, 12, 0, 5));
  const logs: string[] = [];
  const loopback = { host: '127.0.0.1', port: 0 };
  let cluster: RunningCluster;
  try {
    cluster = await startCluster({
      dir,
      configFile: GATEWAY_CONFIG,
      pluginsDir: PLUGINS_DIR,
      adminHost: '127.0.0.1',
      adminPort: 0,
      balancer: loopback,
      clusterListen: loopback,
      nodes: [loopback, loopback],
      // each node's Status API (/metrics), as npm run start:cluster gives them
      statusListens: [loopback, loopback],
      redis: loopback,
      env: { DECK_ANIMAL_STORE_BACKEND_URL: backend.url, ...options.env },
      // a write answers once both nodes run it; on a loaded machine that can take over 1 s
      writeSettleMs: 15_000,
      now: clock.now,
      log: (level, message) => {
        logs.push(`${level}: ${message}`);
        if (logs.length > 20_000) logs.splice(0, logs.length - 20_000);
      },
      node: { workerProcesses: 1, sharedDicts: ['animal_store_edge 10m'], testClock: true, logLevel: 'info' },
    });
  } catch (error) {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const follow = (ms: number) => Promise.all(cluster.nodes.map((node) => setDataPlaneClock(node.prefix, ms))).then(() => undefined);
  const unfollow = clock.follow(follow);
  await follow(clock.now());

  const bases = { balancer: cluster.balancer.url, 1: cluster.nodes[0]!.proxyUrl, 2: cluster.nodes[1]!.proxyUrl };
  const admin = (path: string, init: RequestInit & { json?: unknown } = {}) => request(`${cluster.adminUrl}${path}`, init);
  return Object.assign(cluster, {
    backend,
    clock,
    logs,
    call: (target: 'balancer' | 1 | 2, path: string, callOptions?: CallOptions) => call(bases[target], path, callOptions),
    admin,
    async provision(username: string, limits?: Record<string, unknown>) {
      const consumer = await admin('/consumers', { method: 'POST', json: { username } });
      if (consumer.status !== 201) throw new Error(`cannot create ${username}: ${JSON.stringify(consumer.body)}`);
      // in our ACL group, as the CLI puts every consumer (kong.yml's animal-store-access)
      const group = await admin(`/consumers/${username}/acls/animal-store`, { method: 'PUT', json: { tags: ['petstore-consumer'] } });
      if (group.status !== 200) throw new Error(`cannot put ${username} in the ACL group: ${JSON.stringify(group.body)}`);
      // as the CLI does: the key is generated here, Kong stores its digest (tagged hashed)
      const key = generateApiKey();
      const credential = await admin(`/consumers/${username}/key-auth`, { method: 'POST', json: storedCredential(key, ['petstore-consumer']) });
      if (credential.status !== 201) throw new Error(`cannot create a key for ${username}: ${JSON.stringify(credential.body)}`);
      if (limits) {
        const plugin = await admin(`/consumers/${username}/plugins`, { method: 'POST', json: { name: 'rate-limiting', config: limits } });
        if (plugin.status !== 201) throw new Error(`cannot set limits: ${JSON.stringify(plugin.body)}`);
      }
      return { key, consumerId: consumer.body.id as string, credentialId: credential.body.id as string };
    },
    redisCommand: async (...args: (string | number)[]) => (await redisCommands(cluster.redis.port, [args]))[0]!,
    async dispose() {
      unfollow();
      // nginx's fast shutdown first: close() stops the nodes gracefully, ~0.5 s each.
      await Promise.all(cluster.nodes.map((node) => node.stop()));
      await cluster.close();
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}
