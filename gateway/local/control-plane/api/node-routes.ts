import { hostname } from 'node:os';
import type Router from '@koa/router';
import { KONG_TAGLINE, KONG_VERSION } from '../kong-version.ts';
import type { PluginRegistry } from '../../plugins/registry.ts';
import type { AdminOperations } from './operations.ts';

export interface NodeInfo {
  nodeId: string;
  connections: () => { active: number; handled: number; total: number };
  /** What the Lua VM reports, as Kong's `lua_version` does (LuaJIT, or the wasmoon fallback). */
  luaVersion: string;
}

/** `GET /`, `/status` and `/plugins/enabled` (kong/api/routes/kong.lua, health.lua). */
export function mountNodeRoutes(router: Router, operations: AdminOperations, registry: PluginRegistry, node: NodeInfo): void {
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
        enabled_in_cluster: [...new Set(operations.snapshot.list('plugins').map((p) => p.name))].sort(),
      },
      pids: { master: process.pid, workers: [process.pid] },
      // DB mode, as Kong with PostgreSQL answers: decK syncs a database-backed Kong and refuses
      // `database: off` (go-kong information_service.go IsInMemory). The store itself is SQLite.
      configuration: { database: 'postgres', role: 'traditional', router_flavor: 'traditional_compatible', plugins: ['bundled', ...registry.custom] },
    };
  });

  router.get('/status', (ctx) => {
    const { active, handled, total } = node.connections();
    const memory = process.memoryUsage();
    ctx.body = {
      database: { reachable: true },
      server: {
        connections_accepted: total,
        connections_active: active,
        connections_handled: handled,
        connections_reading: 0,
        connections_writing: active,
        connections_waiting: 0,
        total_requests: handled,
      },
      memory: {
        workers_lua_vms: [{ pid: process.pid, http_allocated_gc: `${(memory.heapUsed / 1048576).toFixed(2)} MiB` }],
        lua_shared_dicts: {},
      },
      configuration_hash: String(operations.snapshot.version).padStart(32, '0'),
    };
  });

  router.get('/plugins/enabled', (ctx) => {
    ctx.body = { enabled_plugins: [...registry.definitions.keys()].sort() };
  });

}
