import { hostname } from 'node:os';
import type Router from '@koa/router';
import { KONG_TAGLINE, KONG_VERSION } from '../kong-version.ts';
import type { PluginRegistry } from '../schema/plugins/registry.ts';
import type { EntityService } from '../db/entity-service.ts';

/** nginx's connection counters (ngx_http_stub_status), as Kong's /status reports them. */
export interface ServerStatus {
  connections_accepted: number;
  connections_active: number;
  connections_handled: number;
  connections_reading: number;
  connections_writing: number;
  connections_waiting: number;
  total_requests: number;
}

export interface NodeInfo {
  nodeId: string;
  role: 'traditional' | 'control_plane';
  /** What the data plane's LuaJIT reports, as Kong's `lua_version` does. */
  luaVersion: string;
  /** The data plane's nginx counters; zeros when no node answers. */
  serverStatus?: () => Promise<ServerStatus | undefined>;
  /** The hash of the configuration the control plane publishes. */
  configurationHash: () => string;
  /** Kong's configuration.proxy_listeners: the node's proxy listeners, as kong/conf_loader parses them. */
  proxyListeners?: () => Array<Record<string, unknown>>;
}

const NO_SERVER: ServerStatus = {
  connections_accepted: 0,
  connections_active: 0,
  connections_handled: 0,
  connections_reading: 0,
  connections_writing: 0,
  connections_waiting: 0,
  total_requests: 0,
};

/** `GET /`, `/status` and `/plugins/enabled` (kong/api/routes/kong.lua, health.lua). */
export function mountNodeRoutes(router: Router, service: EntityService, registry: PluginRegistry, node: NodeInfo): void {
  const { nodeId } = node;
  router.get('/', (ctx) => {
    const available: Record<string, { version: string; priority: number }> = {};
    for (const [name, definition] of registry.definitions) available[name] = { version: definition.version, priority: definition.priority };
    ctx.body = {
      version: KONG_VERSION,
      edition: 'community',
      tagline: KONG_TAGLINE,
      node_id: nodeId,
      hostname: hostname(),
      lua_version: node.luaVersion,
      timers: { running: 0, pending: 0 },
      plugins: {
        available_on_server: available,
        enabled_in_cluster: [...new Set(service.list('plugins').map((p) => p.name))].sort(),
      },
      pids: { master: process.pid, workers: [process.pid] },
      // DB mode, as Kong with PostgreSQL answers: decK syncs a database-backed Kong and refuses
      // `database: off` (go-kong information_service.go IsInMemory). The store itself is SQLite.
      configuration: {
        database: 'postgres',
        role: node.role,
        router_flavor: 'traditional_compatible',
        plugins: ['bundled', ...registry.custom],
        proxy_listeners: node.proxyListeners?.() ?? [],
      },
    };
  });

  router.get('/status', async (ctx) => {
    const memory = process.memoryUsage();
    ctx.body = {
      database: { reachable: true },
      server: (await node.serverStatus?.()) ?? NO_SERVER,
      memory: {
        workers_lua_vms: [{ pid: process.pid, http_allocated_gc: `${(memory.heapUsed / 1048576).toFixed(2)} MiB` }],
        lua_shared_dicts: {},
      },
      // Kong reports an MD5 (32 hex); the snapshot's hash is a SHA-256: its first 32 hex.
      configuration_hash: node.configurationHash().slice(0, 32),
    };
  });

  router.get('/plugins/enabled', (ctx) => {
    ctx.body = { enabled_plugins: [...registry.definitions.keys()].sort() };
  });

}
