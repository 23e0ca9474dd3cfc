import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminApp } from './api/admin-app.ts';
import { answerClientErrors } from './api/client-error.ts';
import { serverStatusOf, type NodeStatusApi } from './api/metrics-route.ts';
import { ServerCounters } from './api/server-counters.ts';
import { EntityService } from './db/entity-service.ts';
import { EntityStore, type Draft } from './db/entity-store.ts';
import { readDeclarativeConfig, type DeclarativeConfig } from './declarative/load-config.ts';
import { syncDeclarative, type SyncSummary } from './declarative/sync.ts';
import type { PluginRegistry } from './schema/plugins/registry.ts';
import { ClusterListener, type ClusterAddress } from './snapshot/cluster-listener.ts';
import { compileSnapshot, type CompiledSnapshot } from './snapshot/snapshot.ts';

export type Logger = (level: 'debug' | 'info' | 'warn' | 'err', message: string) => void;

/** How long an Admin API write waits for every data-plane node to run it (README: snapshot delivery). */
export const WRITE_SETTLE_MS = 1000;

/**
 * How often rows past their ttl are deleted: Kong's ttl_cleanup_interval
 * (kong/db/strategies/postgres/connector.lua:970, `_debug_pg_ttl_cleanup_interval or 300` s).
 */
const TTL_CLEANUP_INTERVAL_MS = 300_000;

/** Runs `task` every `ms`, as Kong's timer_every; answers a function that stops it. */
export type Every = (ms: number, task: () => Promise<void>) => () => void;

const everyRealInterval: Every = (ms, task) => {
  const timer = setInterval(() => void task(), ms);
  timer.unref();
  return () => clearInterval(timer);
};

/** nginx's default keepalive_timeout, which Kong's Admin API keeps. */
const ADMIN_KEEPALIVE_TIMEOUT_MS = 75_000;

export interface ControlPlaneOptions {
  store: EntityStore;
  registry: PluginRegistry;
  /**
   * Declarative files (gateway/platform/kong.yml, gateway/kong.yml), synced into the store at start
   * in this order, each like `deck gateway sync` with its own select tags; empty: none (DB mode).
   */
  configFiles?: readonly string[];
  /** Environment for decK's ${{ env "DECK_*" }} substitution. */
  env: NodeJS.ProcessEnv;
  adminHost: string;
  adminPort: number;
  /** Where data-plane nodes fetch snapshots: a unix socket, or host:port for nodes elsewhere. */
  cluster: ClusterAddress;
  /** What GET / reports as Kong's `role` ("traditional" for one embedded node, "control_plane" for a cluster). */
  role: 'traditional' | 'control_plane';
  /** What the data plane's LuaJIT reports (GET / lua_version). */
  luaVersion: string;
  /** GET /'s configuration.log_level: KONG_LOG_LEVEL (Kong's default, notice, when not given). */
  logLevel?: string;
  /** GET /'s configuration.proxy_listeners: the embedded node's, once it runs. */
  proxyListeners?: () => Array<Record<string, unknown>>;
  nodeId?: string;
  /** The embedded data-plane node's Status API: the Admin API's /metrics and /status read it. */
  nodeStatus?: NodeStatusApi;
  /**
   * The bound on an Admin API write's wait for the data planes (WRITE_SETTLE_MS). Tests on a
   * loaded machine raise it: their next request must see the write.
   */
  writeSettleMs?: number;
  now: () => number;
  /** The timer of the ttl cleanup; tests run it on their clock. */
  every?: Every;
  log: Logger;
}

export interface ControlPlane {
  adminUrl: string;
  /** The address data-plane nodes poll: `unix:/path` or `host:port`. */
  clusterAddress: string;
  store: EntityStore;
  registry: PluginRegistry;
  /** The snapshot every node should run. */
  snapshot(): CompiledSnapshot;
  /** Each declarative file's select tags (its scope), in file order. */
  selectTags: string[][];
  /** Re-reads the declarative files and applies them atomically; on error the running configuration stays. */
  reload(): Promise<SyncSummary>;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const { address, port: actual } = server.address() as AddressInfo;
      resolve(`http://${address.includes(':') ? `[${address}]` : address}:${actual}`);
    });
  });
}

/**
 * Syncs each file in order, as one `deck gateway sync` per file (each within its own select
 * tags), in one transaction: the store takes all of them or none.
 */
function syncAll(draft: Draft, configs: readonly DeclarativeConfig[], service: EntityService): SyncSummary {
  const total: SyncSummary = { created: 0, updated: 0, deleted: 0 };
  for (const config of configs) {
    const summary = syncDeclarative(draft, config, service);
    total.created += summary.created;
    total.updated += summary.updated;
    total.deleted += summary.deleted;
  }
  return total;
}

/**
 * Checks declarative files as the control plane would apply them (Kong's `kong config parse`):
 * read, then synced in order into an empty store in memory. Throws DeclarativeConfigError naming
 * every problem; answers what a sync into an empty store would create.
 */
export async function checkDeclarativeFiles(
  files: readonly string[],
  registry: PluginRegistry,
  env: NodeJS.ProcessEnv,
  now: () => number = Date.now,
): Promise<SyncSummary> {
  const configs = files.map((file) => readDeclarativeConfig(file, env));
  const store = await EntityStore.open(':memory:');
  try {
    const service = new EntityService(store, registry, now);
    return await service.transaction((draft) => syncAll(draft, configs, service));
  } finally {
    await store.close();
  }
}

/**
 * The control plane: the store (kong.yml synced into it), the Admin API, and the cluster listener
 * that hands every committed configuration to the data-plane nodes as one compiled snapshot.
 * kong.yml is validated before the store is touched: a bad file refuses to start.
 */
export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { store, registry, now, log, env } = options;
  // Each state a write would commit is compiled first, inside the entity service's write: what
  // cannot be compiled is refused before it is stored; what is committed is published as compiled.
  let prepared: CompiledSnapshot | undefined;
  const service = new EntityService(store, registry, now, (draft) => {
    prepared = compileSnapshot(draft);
  });
  const load = (): DeclarativeConfig[] => (options.configFiles ?? []).map((file) => readDeclarativeConfig(file, env));
  const declarative = load();
  if (declarative.length > 0) await service.transaction((draft) => syncAll(draft, declarative, service));

  const cluster = new ClusterListener(prepared ?? compileSnapshot(store.snapshot), (level, message) => log(level, message), now);
  prepared = undefined;
  store.onChange((view) => {
    const compiled = prepared?.version === view.version ? prepared : compileSnapshot(view);
    prepared = undefined;
    cluster.publish(compiled);
  });
  const clusterAddress = await cluster.listen(options.cluster);
  const stopCleanup = (options.every ?? everyRealInterval)(TTL_CLEANUP_INTERVAL_MS, async () => {
    try {
      await service.purgeExpired();
    } catch (error) {
      log('warn', `unable to clean expired rows: ${error instanceof Error ? error.message : String(error)}`);
    }
  });

  const nodeId = options.nodeId ?? randomUUID();
  // without a node of its own, /status counts what the Admin API's server serves
  const counters = new ServerCounters();
  const admin = createAdminApp({
    service,
    registry,
    nodeId,
    role: options.role,
    luaVersion: options.luaVersion,
    logLevel: options.logLevel ?? 'notice',
    now,
    log: (message) => log('err', message),
    settled: () => cluster.settled(options.writeSettleMs ?? WRITE_SETTLE_MS),
    dataPlanes: () => cluster.dataPlanes(),
    proxyListeners: options.proxyListeners,
    nodeStatus: options.nodeStatus,
    serverStatus: options.nodeStatus ? serverStatusOf(options.nodeStatus) : () => Promise.resolve(counters.status()),
  });
  const adminServer = createServer(admin.app.callback());
  counters.watch(adminServer);
  answerClientErrors(adminServer, admin.servesPath);
  // Kong's Admin API server block sets no keepalive_timeout (kong/templates/nginx_kong.lua:411-453
  // at 3.9.3): nginx's default, 75 s, and no Keep-Alive header (admin-app.ts). A client's pool
  // then closes an idle connection long before the server does: with Node's 5 s and its
  // Keep-Alive hint, undici kept connections 4 s and a write sent as the server closed one failed.
  adminServer.keepAliveTimeout = ADMIN_KEEPALIVE_TIMEOUT_MS;
  let adminUrl: string;
  try {
    adminUrl = await listen(adminServer, options.adminPort, options.adminHost);
  } catch (error) {
    stopCleanup();
    await cluster.close();
    throw error;
  }

  let selectTags = declarative.map((config) => config.selectTags);
  return {
    adminUrl,
    clusterAddress,
    store,
    registry,
    snapshot: () => cluster.snapshot,
    get selectTags() {
      return selectTags;
    },
    async reload() {
      const next = load();
      if (next.length === 0) return { created: 0, updated: 0, deleted: 0 };
      const summary = await service.transaction((draft) => syncAll(draft, next, service));
      selectTags = next.map((config) => config.selectTags);
      // As an Admin API write: reloaded means the nodes run it (bounded).
      await cluster.settled(options.writeSettleMs ?? WRITE_SETTLE_MS);
      return summary;
    },
    async close() {
      stopCleanup();
      await new Promise<void>((resolve) => adminServer.close(() => resolve()));
      adminServer.closeAllConnections();
      await cluster.close();
    },
  };
}
