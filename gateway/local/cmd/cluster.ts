import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlPlane, Logger } from '../control-plane/control-plane.ts';
import { BALANCER_SOURCE_ADDRESS, startBalancer, type RunningBalancer } from './balancer.ts';
import { startDataPlaneNode, type DataPlaneNode } from './data-plane-node.ts';
import { nginxLevel, startControlPlaneFor, type GatewayOptions, type NodeOptions } from './gateway.ts';
import { startRedisServer, type RunningRedis } from './redis-server.ts';
import { LOCAL_DECK_ENV } from './settings.ts';

/** `host` and `port` (0: a free loopback port). */
interface ListenAddress {
  host: string;
  port: number;
}

export interface ClusterOptions extends Omit<GatewayOptions, 'prefix' | 'node' | 'dataFile'> {
  /** Every piece gets a directory of its own in it: redis/, control-plane/, node-1/…, balancer/. */
  dir: string;
  /** The load balancer, where clients connect. */
  balancer: ListenAddress;
  /** Its TLS listener, where it terminates TLS (none when not given). */
  balancerSsl?: ListenAddress;
  /** The control plane's cluster listener, which the nodes long-poll. */
  clusterListen: ListenAddress;
  /** One data-plane node per address (their proxy listeners). */
  nodes: ListenAddress[];
  /** Each node's Status API (`/metrics`, `/status`), by position; none when not given. */
  statusListens?: ListenAddress[];
  /** The Redis the nodes share (loopback). */
  redis: ListenAddress;
  /** Settings every node gets (workers, shared dicts, log level, the test clock…). */
  node?: NodeOptions;
}

export interface RunningCluster {
  balancer: RunningBalancer;
  adminUrl: string;
  /** Where the nodes long-poll: `host:port`. */
  clusterAddress: string;
  controlPlane: ControlPlane;
  nodes: DataPlaneNode[];
  redis: RunningRedis;
  /** What runs the data plane, for the start banner. */
  engine: string;
  /** Starts redis-server again on its port, empty (after it was killed or stopped). */
  restartRedis(): Promise<RunningRedis>;
  /** Balancer, nodes, control plane, then Redis. */
  close(): Promise<void>;
}

function statusListenOf(address: ListenAddress | undefined): string | null {
  if (!address) return null;
  return `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
}

/**
 * kong.yml's counter settings for the cluster: policy redis on the Redis it starts, unless the
 * environment chose a policy (DECK_RATE_LIMIT_POLICY=local shows what per-node counting allows).
 */
function clusterRateLimitEnv(env: NodeJS.ProcessEnv, redis: ListenAddress): Record<string, string> {
  return {
    DECK_RATE_LIMIT_POLICY: env.DECK_RATE_LIMIT_POLICY ?? 'redis',
    DECK_RATE_LIMIT_REDIS_HOST: redis.host,
    DECK_RATE_LIMIT_REDIS_PORT: String(redis.port),
  };
}

/**
 * Kong's hybrid topology on this machine, as `npm run start:cluster` runs it: a redis-server on
 * loopback, the control plane (role control_plane: Admin API, store, kong.yml, cluster listener
 * on host:port), data-plane nodes that long-poll it, and an nginx load balancer (round robin) in
 * front of them, each in a directory of its own under `dir`. The nodes trust the balancer's
 * X-Forwarded-For, and only the balancer's (it connects from BALANCER_SOURCE_ADDRESS), so the
 * anonymous per-IP limit counts the client.
 */
export async function startCluster(options: ClusterOptions): Promise<RunningCluster> {
  const log: Logger = options.log ?? ((level, message) => (level === 'warn' || level === 'err' ? console.error(`[cluster] ${level}: ${message}`) : undefined));
  mkdirSync(options.dir, { recursive: true });
  const stack: Array<() => Promise<void>> = [];
  const unwind = async () => {
    for (const stop of stack.reverse()) await stop();
  };

  try {
    const redisDir = join(options.dir, 'redis');
    const redisLog = (line: string) => log(/# |WARNING/.test(line) ? 'warn' : 'info', `[redis] ${line}`);
    let redis = await startRedisServer({ dir: redisDir, host: options.redis.host, port: options.redis.port, onLine: redisLog });
    const redisPort = redis.port;
    stack.push(() => redis.stop());

    mkdirSync(join(options.dir, 'control-plane'), { recursive: true });
    const started = await startControlPlaneFor({
      ...options,
      log,
      dataFile: join(options.dir, 'control-plane', 'gateway.sqlite'),
      env: {
        DECK_ANIMAL_STORE_HOSTS: LOCAL_DECK_ENV.DECK_ANIMAL_STORE_HOSTS!,
        DECK_ANIMAL_STORE_PORTAL_URL: LOCAL_DECK_ENV.DECK_ANIMAL_STORE_PORTAL_URL!,
        DECK_ANIMAL_STORE_HTTPS_ONLY: LOCAL_DECK_ENV.DECK_ANIMAL_STORE_HTTPS_ONLY!,
        ...options.env,
        ...clusterRateLimitEnv(options.env ?? process.env, { host: redis.host, port: redisPort }),
      },
      cluster: options.clusterListen,
      role: 'control_plane',
      logLevel: options.node?.logLevel,
    });
    stack.push(() => started.close());
    const { controlPlane, nginx, plugins } = started;

    const nodes: DataPlaneNode[] = [];
    for (const [i, listen] of options.nodes.entries()) {
      const name = `node-${i + 1}`;
      const node = await startDataPlaneNode({
        ...options.node,
        proxyListen: `${listen.host}:${listen.port} reuseport backlog=16384`,
        statusListen: statusListenOf(options.statusListens?.[i]),
        prefix: join(options.dir, name),
        nginx,
        plugins,
        pluginsDir: options.pluginsDir,
        clusterControlPlane: controlPlane.clusterAddress,
        snapshot: controlPlane.snapshot().json,
        trustedIps: [BALANCER_SOURCE_ADDRESS, ...(options.node?.trustedIps ?? []).filter((ip) => ip !== BALANCER_SOURCE_ADDRESS)],
        realIpHeader: 'X-Forwarded-For',
        realIpRecursive: true,
        log: (line) => log(nginxLevel(line), `[${name}] ${line}`),
      });
      nodes.push(node);
      stack.push(() => node.stop({ graceful: true, graceMs: 2000 }));
    }

    const balancer = await startBalancer({
      dir: join(options.dir, 'balancer'),
      host: options.balancer.host,
      port: options.balancer.port,
      ...(options.balancerSsl ? { ssl: options.balancerSsl } : {}),
      upstreams: nodes.map((node) => new URL(node.proxyUrl).host),
      nginx,
      onLine: (line) => log(nginxLevel(line), `[balancer] ${line}`),
    });
    stack.push(() => balancer.stop());

    return {
      balancer,
      adminUrl: controlPlane.adminUrl,
      clusterAddress: controlPlane.clusterAddress,
      controlPlane,
      nodes,
      get redis() {
        return redis;
      },
      engine: started.engine,
      async restartRedis() {
        await redis.stop();
        redis = await startRedisServer({ dir: redisDir, host: redis.host, port: redisPort, onLine: redisLog });
        return redis;
      },
      close: unwind,
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}
