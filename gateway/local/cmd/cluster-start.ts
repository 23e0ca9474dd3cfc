import { accessSync, constants, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isListenError, listenAddress, systemReason } from '../../../packages/node-runtime/startup-error.js';
import type { Logger } from '../control-plane/control-plane.ts';
import { DeclarativeConfigError } from '../control-plane/declarative/load-config.ts';
import { startCluster, type RunningCluster } from './cluster.ts';
import { DataPlaneStartError } from './data-plane-node.ts';
import { AdminListenRefused, declarativeFiles } from './gateway.ts';
import { NginxNotFoundError } from './nginx-binary.ts';
import { RedisNotFoundError } from './redis-server.ts';
import { ServerStartError } from './server-process.ts';
import { readClusterSettings, type ClusterSettings } from './settings.ts';

/**
 * The local cluster's process (`npm run start:cluster` runs it beside the backend under the
 * supervisor, scripts/stack/cluster.ts): Redis, the control plane, the data-plane nodes and the
 * balancer, stopped together. It sends the summary the banner prints over the IPC channel.
 */
export interface ClusterReady {
  balancerUrl: string;
  balancerPid: number;
  /** The balancer's https URL, where it terminates TLS, and the PEM file clients trust. */
  balancerSsl?: { url: string; caFile: string };
  adminUrl: string;
  clusterAddress: string;
  nodes: Array<{ url: string; pid: number; prefix: string; statusUrl?: string }>;
  redis: { address: string; pid: number; version: string };
  /** The control plane runs in this process. */
  controlPlanePid: number;
  configFile: string;
  policy: string;
  /** Consumers' plan plugins (the CLI's) counting with another policy than kong.yml's fallback rate-limiting (service-scoped). */
  plansElsewhere: { count: number; policies: string[] };
  engine: string;
  dir: string;
  /** kong.yml's edge plugin refuses plain HTTP (https_only, DECK_ANIMAL_STORE_HTTPS_ONLY=true). */
  httpsOnly: boolean;
}

const supervised = process.send !== undefined;

let settings: ClusterSettings;
try {
  settings = readClusterSettings();
} catch (error) {
  console.error(`[cluster] ${(error as Error).message}`);
  process.exit(2);
}

/** One line naming what failed and where: the piece, the address, the variable. */
function describeStartupError(error: unknown, s: ClusterSettings): string {
  if (error instanceof DeclarativeConfigError) return `refusing to start: ${error.message}`;
  if (error instanceof AdminListenRefused) return `KONG_ADMIN_LISTEN: ${error.message}`;
  if (error instanceof NginxNotFoundError || error instanceof RedisNotFoundError) return error.message;
  if (error instanceof ServerStartError) {
    const busy = /Address already in use/.test(error.message);
    if (busy && error.message.includes('redis-server')) return `cannot listen on ${s.redis.host}:${s.redis.port} (CLUSTER_REDIS_LISTEN): address already in use`;
    // nginx names the listener it could not bind: the plain one or the TLS one
    const bound = /bind\(\) to (\S+) failed/.exec(error.message)?.[1] ?? `${s.balancer.host}:${s.balancer.port}`;
    if (busy) return `cannot listen on ${bound} (KONG_PROXY_LISTEN, the balancer): address already in use`;
    return error.message;
  }
  if (error instanceof DataPlaneStartError) {
    const busy = error.addressInUse;
    if (busy) return `cannot listen on ${busy} (CLUSTER_NODE_LISTEN): address already in use`;
    return error.message.split('\n')[0]!;
  }
  if (isListenError(error)) {
    const { port } = error as { port?: number };
    const variable = port === s.clusterListen.port ? 'KONG_CLUSTER_LISTEN' : 'KONG_ADMIN_LISTEN';
    return `cannot listen on ${listenAddress(error, s.adminHost!, s.adminPort!)} (${variable}): ${systemReason(error)}`;
  }
  return `refusing to start: ${(error as Error).message.split('\n')[0]}`;
}

/** Every line goes to <dir>/cluster.log; once started, warnings and errors also go to stderr. */
let started = false;
function fileLogger(dir: string): Logger {
  mkdirSync(dir, { recursive: true });
  const file = createWriteStream(join(dir, 'cluster.log'), { flags: 'a' });
  return (level, message) => {
    if (level === 'debug') return;
    file.write(`${level}: ${message}\n`);
    if (started && (level === 'warn' || level === 'err')) console.error(`[cluster] ${level}: ${message}`);
  };
}

let cluster: RunningCluster;
try {
  for (const file of declarativeFiles(settings.configFile)) accessSync(file, constants.R_OK);
  cluster = await startCluster({ ...settings, env: process.env, log: fileLogger(settings.dir) });
} catch (error) {
  console.error(`[cluster] ${describeStartupError(error, settings)}`);
  process.exit(1);
}

started = true;
const policy = process.env.DECK_RATE_LIMIT_POLICY ?? 'redis';
// Plan plugins copy the global plugin's policy when the CLI writes them (packages/provisioning),
// so a store kept from a run with another DECK_RATE_LIMIT_POLICY still counts the old way until `plans sync`.
const elsewhere = cluster.controlPlane.store.snapshot
  .list('plugins')
  .filter((p) => p.name === 'rate-limiting' && p.consumer && p.tags?.includes('petstore-consumer'))
  .map((p) => String((p.config as { policy?: unknown }).policy ?? 'local'))
  .filter((planPolicy) => planPolicy !== policy);
const ready: ClusterReady = {
  balancerUrl: cluster.balancer.url,
  balancerPid: cluster.balancer.pid,
  ...(cluster.balancer.sslUrl ? { balancerSsl: { url: cluster.balancer.sslUrl, caFile: cluster.balancer.caFile! } } : {}),
  adminUrl: cluster.adminUrl,
  clusterAddress: cluster.clusterAddress,
  nodes: cluster.nodes.map((node) => ({
    url: node.proxyUrl,
    pid: node.pid,
    prefix: node.prefix,
    ...(node.statusUrl ? { statusUrl: node.statusUrl } : {}),
  })),
  redis: { address: `${cluster.redis.host}:${cluster.redis.port}`, pid: cluster.redis.pid, version: cluster.redis.version },
  controlPlanePid: process.pid,
  configFile: settings.configFile,
  policy,
  plansElsewhere: { count: elsewhere.length, policies: [...new Set(elsewhere)] },
  engine: cluster.engine,
  dir: settings.dir,
  httpsOnly: cluster.controlPlane.store.snapshot
    .list('plugins')
    .some((p) => p.name === 'animal-store-edge' && (p.config as { https_only?: unknown }).https_only === true),
};
if (supervised) process.send!({ ready });
else console.log(`[cluster] balancer ${ready.balancerUrl}, Admin API ${ready.adminUrl}; reload kong.yml: kill -HUP ${process.pid}`);

process.on('SIGHUP', () => {
  cluster.controlPlane.reload().then(
    (summary) => console.log(`[cluster] kong.yml reloaded: ${summary.created} created, ${summary.updated} updated, ${summary.deleted} deleted`),
    (error: Error) => console.error(`[cluster] kong.yml NOT reloaded, the running configuration stays: ${error.message}`),
  );
});

let stopping = false;
async function stop(reason: string, code = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  started = false; // what the pieces say while they stop goes to cluster.log only
  if (!supervised) console.log(`[cluster] ${reason}: shutting down`);
  await cluster.close();
  process.exit(code);
}
// A piece dying on its own is a crash of the cluster: say which, and stop the rest.
const watched: Array<[string, number, Promise<{ code: number | null; signal: NodeJS.Signals | null }>]> = [
  ...cluster.nodes.map((node, i): [string, number, typeof node.exited] => [`data-plane node ${i + 1} (nginx)`, node.pid, node.exited]),
  ['the balancer (nginx)', cluster.balancer.pid, cluster.balancer.exited],
  ['redis-server', cluster.redis.pid, cluster.redis.exited],
];
for (const [name, pid, exited] of watched) {
  void exited.then(({ code, signal }) => {
    if (stopping) return;
    console.error(`[cluster] ${name}, pid ${pid}, exited (${signal ?? `code ${code}`})`);
    void stop(`${name} gone`, 1);
  });
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal));
process.on('disconnect', () => void stop('supervisor gone'));
