import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkDeclarativeFiles, startControlPlane, type ControlPlane, type Every, type Logger } from '../control-plane/control-plane.ts';
import type { SyncSummary } from '../control-plane/declarative/sync.ts';
import type { ClusterAddress } from '../control-plane/snapshot/cluster-listener.ts';
import type { NodeStatusApi } from '../control-plane/api/metrics-route.ts';
import { EntityStore } from '../control-plane/db/entity-store.ts';
import { BUNDLED_SCHEMAS, KONG_BUNDLED_PLUGINS, PluginRegistry } from '../control-plane/schema/plugins/registry.ts';
import { startDataPlaneNode, type DataPlaneNode } from './data-plane-node.ts';
import { describePlugins } from './describe-plugins.ts';
import { kongListener, parseListeners } from './listeners.ts';
import { findNginx, type NginxBinary } from './nginx-binary.ts';
import { prefixPaths, type NodeSettings } from './nginx-prefix.ts';
import { statusSocketClient } from './node-status.ts';

/** Kong's settings for one node, as `KONG_*` variables name them (cmd/settings.ts reads them). */
export type NodeOptions = Partial<Omit<NodeSettings, 'clusterControlPlane' | 'plugins' | 'pluginsDir' | 'nodeId'>>;

export interface GatewayOptions {
  /**
   * The declarative files, comma-separated as Kong's list settings (gateway/platform/kong.yml,
   * gateway/kong.yml): synced into the store at start in this order, each like `deck gateway
   * sync` within its own select tags; '' for none (DB mode).
   */
  configFile: string;
  /** gateway/plugins: custom Lua plugins, one directory each. */
  pluginsDir: string;
  /**
   * The custom plugins to load, as Kong's `plugins = bundled,<name>…` lists them; every plugin
   * directory in `pluginsDir` when not given.
   */
  plugins?: string[];
  /** SQLite file of the control plane's store (':memory:' for none). */
  dataFile: string;
  /** The data-plane node's nginx prefix (created when missing). */
  prefix: string;
  adminHost?: string;
  adminPort?: number;
  /** Bind the Admin API to a non-loopback address (Kong's Admin API has no authentication). */
  allowRemoteAdmin?: boolean;
  node?: NodeOptions;
  /**
   * KONG_NODE_ID: GET /'s node_id and the embedded node's (a cluster's nodes keep their own);
   * a new random one at each start when not given.
   */
  nodeId?: string;
  /** How long an Admin API write waits for the data plane to run it (default 1 s). */
  writeSettleMs?: number;
  /** Environment for decK's ${{ env "DECK_*" }} substitution. */
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  /** The timer of the control plane's ttl cleanup (default: a real interval). */
  every?: Every;
  log?: Logger;
}

export interface RunningGateway {
  proxyUrl: string;
  adminUrl: string;
  /** The data plane's status listener, when KONG_STATUS_LISTEN is on. */
  statusUrl: string | undefined;
  controlPlane: ControlPlane;
  node: DataPlaneNode;
  /** What runs the data plane, for the start banner: the nginx binary and its LuaJIT. */
  engine: string;
  /** Re-reads kong.yml (kill -HUP); on error the running configuration stays. */
  reload: ControlPlane['reload'];
  close(): Promise<void>;
}

export class AdminListenRefused extends Error {}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

const NGINX_LEVELS: Record<string, 'debug' | 'info' | 'warn' | 'err'> = {
  debug: 'debug', info: 'info', notice: 'info', warn: 'warn', error: 'err', crit: 'err', alert: 'err', emerg: 'err',
};

/** An nginx error-log line's level (`2026/11/25 09:19:12 [warn] 20901#20901: …`). */
export function nginxLevel(line: string): 'debug' | 'info' | 'warn' | 'err' {
  const level = /^\S+ \S+ \[(\w+)\]/.exec(line)?.[1];
  return (level !== undefined && NGINX_LEVELS[level]) || 'info';
}

/** The custom plugins in `pluginsDir`: each directory with a handler.lua (KONG_PLUGINS=bundled,<name>). */
export function customPlugins(pluginsDir: string): string[] {
  if (!existsSync(pluginsDir)) return [];
  return readdirSync(pluginsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(pluginsDir, entry.name, 'handler.lua')))
    .map((entry) => entry.name)
    .sort();
}

/** The control plane as one role of a deployment runs it, with what its nodes need to start. */
export interface StartedControlPlane {
  controlPlane: ControlPlane;
  nginx: NginxBinary;
  /** Every plugin the nodes load: the bundled ones and the custom ones. */
  plugins: string[];
  /** What runs the data plane, for a start banner: the nginx binary and its LuaJIT. */
  engine: string;
  /** Stops the control plane and closes its store. */
  close(): Promise<void>;
}

/**
 * The plugins a node loads (Kong's bundled ones the data plane implements, then the custom ones),
 * described by the data plane's own Lua: the control plane learns priorities, versions and custom
 * schemas from it, so one runtime reads all Lua.
 */
async function loadPlugins(pluginsDir: string, custom: string[], nginx = findNginx()) {
  for (const name of custom) {
    if (KONG_BUNDLED_PLUGINS.has(name)) throw new Error(`custom plugin ${name} has the name of a bundled Kong plugin`);
  }
  const plugins = [...BUNDLED_SCHEMAS.map((schema) => schema.name), ...custom];
  const described = await describePlugins({ nginx, pluginsDir, plugins });
  return { plugins, registry: PluginRegistry.fromDescriptions(described.plugins), luaVersion: described.lua_version };
}

/** The files of a `configFile` setting: one path, or several separated by commas. */
export function declarativeFiles(configFile: string): string[] {
  return configFile.split(',').map((file) => file.trim()).filter((file) => file !== '');
}

/**
 * Checks a declarative file without starting anything, as `kong config parse` does: every
 * problem is named in the DeclarativeConfigError thrown. Answers what it would create.
 */
export async function checkDeclarativeConfig(options: {
  configFile: string;
  pluginsDir: string;
  plugins?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<SyncSummary> {
  const { registry } = await loadPlugins(options.pluginsDir, options.plugins ?? customPlugins(options.pluginsDir));
  return checkDeclarativeFiles(declarativeFiles(options.configFile), registry, options.env ?? process.env);
}

/**
 * The control plane: the custom plugins described by the data plane's Lua, the store, kong.yml,
 * the Admin API and the cluster listener at `cluster`. What startGateway (one embedded node) and
 * startCluster (nodes behind a balancer) share.
 */
export async function startControlPlaneFor(
  options: Omit<GatewayOptions, 'prefix' | 'node'> & {
    cluster: ClusterAddress;
    role: 'traditional' | 'control_plane';
    /** The embedded node's Status API (traditional mode): the Admin API's /metrics and /status. */
    nodeStatus?: NodeStatusApi;
    /** The embedded node's proxy listeners (traditional mode), for GET /. */
    proxyListeners?: () => Array<Record<string, unknown>>;
    /** The nodes' KONG_LOG_LEVEL, for GET /. */
    logLevel?: string;
  },
): Promise<StartedControlPlane> {
  const now = options.now ?? Date.now;
  const log: Logger = options.log ?? ((level, message) => (level === 'warn' || level === 'err' ? console.error(`[gateway] ${level}: ${message}`) : undefined));
  const adminHost = options.adminHost ?? '127.0.0.1';
  if (!LOOPBACK.test(adminHost) && !options.allowRemoteAdmin) {
    throw new AdminListenRefused(`refusing to bind the Admin API to ${adminHost}: it has no authentication; set KONG_ADMIN_ALLOW_REMOTE=true to force it`);
  }
  const nginx = findNginx();
  const custom = options.plugins ?? customPlugins(options.pluginsDir);
  const { plugins, registry, luaVersion } = await loadPlugins(options.pluginsDir, custom, nginx);

  const store = await EntityStore.open(options.dataFile);
  let controlPlane: ControlPlane;
  try {
    controlPlane = await startControlPlane({
      store,
      registry,
      configFiles: declarativeFiles(options.configFile),
      env: options.env ?? process.env,
      adminHost,
      adminPort: options.adminPort ?? 8001,
      cluster: options.cluster,
      role: options.role,
      luaVersion,
      nodeStatus: options.nodeStatus,
      proxyListeners: options.proxyListeners,
      logLevel: options.logLevel,
      nodeId: options.nodeId,
      writeSettleMs: options.writeSettleMs,
      now,
      every: options.every,
      log,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    controlPlane,
    nginx,
    plugins,
    engine: `${nginx.flavor === 'openresty' ? 'OpenResty' : 'nginx'} (${nginx.path}) with ${luaVersion}`,
    async close() {
      await controlPlane.close();
      await store.close();
    },
  };
}

/**
 * One gateway on this machine, as `npm start` runs it: the control plane (Admin API, store,
 * kong.yml) and one data-plane node (nginx + ngx_lua) fetching its snapshots over a unix socket
 * in the node's prefix.
 */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const log: Logger = options.log ?? ((level, message) => (level === 'warn' || level === 'err' ? console.error(`[gateway] ${level}: ${message}`) : undefined));
  mkdirSync(options.prefix, { recursive: true });
  const nodePrefix = join(options.prefix, 'node');
  // GET / reports the node's listeners with the ports it bound (0 in the settings: picked at start).
  const running: { node?: DataPlaneNode } = {};
  const proxyListeners = () => {
    const listen = running.node?.settings.proxyListen ?? options.node?.proxyListen;
    return listen ? parseListeners('KONG_PROXY_LISTEN', listen).map(kongListener) : [];
  };
  const started = await startControlPlaneFor({
    ...options,
    log,
    cluster: { path: join(options.prefix, 'cluster.sock') },
    role: 'traditional',
    nodeStatus: statusSocketClient(prefixPaths(nodePrefix).statusSocket),
    proxyListeners,
    logLevel: options.node?.logLevel,
  });
  const { controlPlane, nginx, plugins } = started;

  let node: DataPlaneNode;
  try {
    node = await startDataPlaneNode({
      ...options.node,
      ...(options.nodeId !== undefined ? { nodeId: options.nodeId } : {}),
      prefix: nodePrefix,
      nginx,
      plugins,
      pluginsDir: options.pluginsDir,
      clusterControlPlane: controlPlane.clusterAddress,
      // The node starts on the current configuration, before its first poll is answered.
      snapshot: controlPlane.snapshot().json,
      log: (line) => log(nginxLevel(line), `[data plane] ${line}`),
    });
  } catch (error) {
    await started.close();
    throw error;
  }
  running.node = node;

  return {
    proxyUrl: node.proxyUrl,
    adminUrl: controlPlane.adminUrl,
    statusUrl: node.statusUrl,
    controlPlane,
    node,
    engine: started.engine,
    reload: () => controlPlane.reload(),
    async close() {
      await node.stop({ graceful: true, graceMs: 2000 });
      await started.close();
    },
  };
}
