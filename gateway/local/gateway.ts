import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminApp } from './control-plane/api/admin-app.ts';
import { AdminOperations } from './control-plane/api/operations.ts';
import { loadDeclarativeConfig } from './control-plane/declarative/load-config.ts';
import { LuaPluginHost } from './lua/lua-plugin-host.ts';
import type { LuaVmChoice } from './lua/vm/open-lua-vm.ts';
import { PluginRegistry } from './plugins/registry.ts';
import { MAX_HEADER_SIZE } from './kong/nginx-defaults.ts';
import { ConnectionGuard } from './proxy/client-errors.ts';
import { ProxyLifecycle } from './proxy/lifecycle.ts';
import { UpstreamPool } from './proxy/upstream.ts';
import { GatewayRuntime, type Logger } from './runtime/gateway-runtime.ts';
import { syncDeclarative, type SyncSummary } from './control-plane/declarative/sync.ts';
import { EntityStore } from './control-plane/db/entity-store.ts';

export interface GatewayOptions {
  /**
   * gateway/kong.yml, synced into the store at start like `deck gateway sync`. Empty: none, as
   * Kong in DB mode (configured only through the Admin API, e.g. by decK).
   */
  configFile: string;
  /** gateway/plugins: custom Lua plugins, one directory each */
  pluginsDir: string;
  /** SQLite file of Admin-API-created entities, e.g. data/gateway.sqlite (':memory:' for none) */
  dataFile: string;
  proxyHost?: string;
  proxyPort?: number;
  adminHost?: string;
  adminPort?: number;
  /** Bind the Admin API to a non-loopback address (Kong's Admin API has no authentication). */
  allowRemoteAdmin?: boolean;
  /** Lua shared dicts, as in KONG_NGINX_HTTP_LUA_SHARED_DICT ("name size; name size"). */
  sharedDicts?: readonly string[];
  /** Which Lua VM runs the custom plugins: LuaJIT where its addon is built, else wasmoon. */
  luaVm?: LuaVmChoice;
  /** Environment for decK's ${{ env "DECK_*" }} substitution. */
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  log?: Logger;
}

export interface RunningGateway {
  proxyUrl: string;
  adminUrl: string;
  runtime: GatewayRuntime;
  store: EntityStore;
  selectTags: string[];
  /** Re-reads kong.yml and applies it atomically; on error the running config is kept. */
  reload(): Promise<SyncSummary>;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Parses KONG_NGINX_HTTP_LUA_SHARED_DICT: `animal_store_bans 10m; other 1m`. */
export function parseSharedDicts(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(';')
    .map((entry) => entry.trim().split(/\s+/)[0])
    .filter((name): name is string => !!name);
}

function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { address, port: actual } = server.address() as AddressInfo;
      const shown = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address;
      resolve(`http://${shown.includes(':') ? `[${shown}]` : shown}:${actual}`);
    });
  });
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const now = options.now ?? (() => Date.now());
  const log: Logger = options.log ?? ((level, message) => (level === 'debug' ? undefined : console.error(`[gateway] ${level}: ${message}`)));
  const adminHost = options.adminHost ?? '127.0.0.1';
  if (!LOOPBACK.test(adminHost) && !options.allowRemoteAdmin) {
    throw new Error(`refusing to bind the Admin API to ${adminHost}: it has no authentication; set KONG_ADMIN_ALLOW_REMOTE=true to force it`);
  }
  const nodeId = randomUUID();
  const lua = await LuaPluginHost.create({ sharedDicts: options.sharedDicts ?? [], nodeId, vm: options.luaVm });
  const registry = PluginRegistry.load(options.pluginsDir, lua);
  const env = options.env ?? process.env;

  // Validate kong.yml before touching the store: a bad file refuses to start.
  const load = () => (options.configFile ? loadDeclarativeConfig(options.configFile, registry, env) : undefined);
  const declarative = load();
  const store = await EntityStore.open(options.dataFile);
  try {
    if (declarative) await store.write((draft) => syncDeclarative(draft, declarative, Math.floor(now() / 1000)));
  } catch (error) {
    await store.close();
    throw error;
  }
  const runtime = new GatewayRuntime(store, registry, lua, now, log);
  const upstreams = new UpstreamPool();

  // Node's parser holds what nginx's four large header buffers hold; the finer limits (one
  // buffer per line) and a missing Host are checked in readRequestHead, to answer as nginx does.
  const proxyServer = createServer({ keepAliveTimeout: 60_000, maxHeaderSize: MAX_HEADER_SIZE, requireHostHeader: false });
  const adminServer = createServer();
  const proxyUrl = await listen(proxyServer, options.proxyPort ?? 8000, options.proxyHost ?? '0.0.0.0');
  const proxyPort = (proxyServer.address() as AddressInfo).port;
  const connections = new ConnectionGuard(log);
  connections.attach(proxyServer);
  const lifecycle = new ProxyLifecycle(runtime, upstreams, proxyPort, connections);
  proxyServer.on('request', lifecycle.handle);
  // nginx sends `100 Continue` when the body is first read, and ignores other expectations.
  proxyServer.on('checkContinue', lifecycle.handle);
  proxyServer.on('checkExpectation', lifecycle.handle);

  let handled = 0;
  let accepted = 0;
  proxyServer.on('connection', () => (accepted += 1));
  proxyServer.on('request', () => (handled += 1));
  proxyServer.on('checkContinue', () => (handled += 1));
  proxyServer.on('checkExpectation', () => (handled += 1));
  const operations = new AdminOperations(store, registry, now);
  const admin = createAdminApp({
    operations,
    registry,
    nodeId,
    luaVersion: lua.luaVersion,
    now,
    log: (message) => log('err', message),
    connections: () => ({ active: 0, handled, total: accepted }),
  });
  adminServer.on('request', admin.callback());
  const adminUrl = await listen(adminServer, options.adminPort ?? 8001, adminHost);

  let selectTags = declarative?.selectTags ?? [];
  return {
    proxyUrl,
    adminUrl,
    runtime,
    store,
    get selectTags() {
      return selectTags;
    },
    async reload() {
      const next = load();
      if (!next) return { created: 0, updated: 0, deleted: 0 };
      const summary = await store.write((draft) => syncDeclarative(draft, next, Math.floor(now() / 1000)));
      selectTags = next.selectTags;
      return summary;
    },
    async close() {
      await Promise.all([
        new Promise<void>((resolve) => proxyServer.close(() => resolve())),
        new Promise<void>((resolve) => adminServer.close(() => resolve())),
      ]);
      proxyServer.closeAllConnections();
      adminServer.closeAllConnections();
      await upstreams.close();
      await store.close();
    },
  };
}
