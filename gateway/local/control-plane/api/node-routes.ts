import { hostname } from 'node:os';
import type Router from '@koa/router';
import { KONG_TAGLINE, KONG_VERSION } from '../kong-version.ts';
import { luaNumber } from '../schema/lua-number.ts';
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
  /** Kong's configuration.log_level: KONG_LOG_LEVEL, the data plane's. */
  logLevel: string;
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

/**
 * kong/tools/string.lua:123-151 bytes_to_str (3.9.3): a count of bytes in `unit` (b: the number;
 * k, m, g: KiB, MiB, GiB with `scale` decimals); an error message for a unit or scale it refuses.
 */
function bytesToStr(bytes: number, unit: string, scale: number | undefined): number | string | Error {
  const u = unit.toLowerCase();
  if (u === '' || u === 'b') return Math.trunc(bytes);
  const decimals = scale ?? 2;
  if (decimals < 0) return new Error('scale must be equal or greater than 0');
  const power = { k: [10, 'KiB'], m: [20, 'MiB'], g: [30, 'GiB'] }[u] as [number, string] | undefined;
  if (!power) return new Error(`invalid unit '${unit}' (expected 'k/K', 'm/M', or 'g/G')`);
  return `${(bytes / 2 ** power[0]).toFixed(Math.trunc(decimals))} ${power[1]}`;
}

const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** Lua's `a < b` after kong.lua:179's gsub: `/` below every other byte, so paths sort segment by segment. */
const bySegments = (a: string, b: string): number => {
  const [x, y] = [a.replaceAll('/', '\0'), b.replaceAll('/', '\0')];
  return x < y ? -1 : x > y ? 1 : 0;
};

/** `GET /`, `/status`, `/endpoints`, `/timers` and `/plugins/enabled` (kong/api/routes/kong.lua, health.lua). */
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
        // kong.lua:83-96: the names in the order kong.db.plugins:each() pages them, by id
        enabled_in_cluster: [...new Set(service.list('plugins').sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((p) => p.name))],
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
        // kong.lua:129: always set, the level errors are logged at
        log_level: node.logLevel,
      },
    };
  });

  // kong/api/routes/health.lua:15-45 (3.9.3): memory in `unit` (default m) with `scale` decimals, 400 on a bad one
  router.get('/status', async (ctx) => {
    const scaleText = first(ctx.query.scale);
    const scale = scaleText === undefined ? undefined : luaNumber(scaleText);
    const unit = first(ctx.query.unit) ?? 'm';
    const checked = bytesToStr(0, unit, scale);
    if (checked instanceof Error) {
      ctx.status = 400;
      ctx.body = { message: checked.message };
      return;
    }
    const gc = bytesToStr(process.memoryUsage().heapUsed, unit, scale);
    ctx.body = {
      database: { reachable: true },
      server: (await node.serverStatus?.()) ?? NO_SERVER,
      memory: {
        workers_lua_vms: [{ pid: process.pid, http_allocated_gc: gc }],
        lua_shared_dicts: {},
      },
      // no configuration_hash: Kong reports one in DB-less mode or on a data plane only
      // (health.lua:47-56; 02-kong_routes_spec.lua:218), and GET / presents DB mode
    };
  });

  // kong.lua:150-184 (3.9.3): every path the Admin API routes, its parameters as {name}, sorted
  router.get('/endpoints', (ctx) => {
    const paths = new Set(router.stack.filter((layer) => layer.methods.length > 0).map((layer) => String(layer.path)));
    ctx.body = { data: [...paths].map((path) => path.replace(/:([^/:]+)/g, '{$1}')).sort(bySegments) };
  });

  // kong.lua:258-272 (3.9.3): the answering worker and its timer-ng statistics. The Admin API is
  // one Node process (GET / lists it as the one worker) that runs no timer-ng timers.
  router.get('/timers', (ctx) => {
    ctx.body = {
      worker: { id: 0, count: 1 },
      stats: {
        flamegraph: { running: '', pending: '', elapsed_time: '' },
        sys: { total: 0, runs: 0, running: 0, pending: 0, waiting: 0 },
        timers: {},
      },
    };
  });

  router.get('/plugins/enabled', (ctx) => {
    ctx.body = { enabled_plugins: [...registry.definitions.keys()].sort() };
  });

}
