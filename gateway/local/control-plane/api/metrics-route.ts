import type Router from '@koa/router';
import { KONG_VERSION } from '../kong-version.ts';
import type { ServerStatus } from './node-routes.ts';
import type { DataPlaneNode } from '../snapshot/cluster-listener.ts';

/** A data-plane node's Status API, as the process running the control plane reaches it. */
export interface NodeStatusApi {
  get(path: string): Promise<{ status: number; contentType: string; body: string }>;
}

export interface MetricsRouteOptions {
  /** The embedded node (one gateway: Kong's traditional mode), or none (a cluster's control plane). */
  node?: NodeStatusApi;
  nodeId: string;
  dataPlanes: () => DataPlaneNode[];
  log: (message: string) => void;
}

/** nginx's counters from the node's Kong /status, for the Admin API's /status (undefined when it does not answer). */
export function serverStatusOf(node: NodeStatusApi): () => Promise<ServerStatus | undefined> {
  return async () => {
    try {
      const res = await node.get('/status');
      return res.status === 200 ? (JSON.parse(res.body) as { server: ServerStatus }).server : undefined;
    } catch {
      return undefined;
    }
  };
}

type Series = { name: string; labels: Record<string, string>; value: number };

const escape = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Lua's tostring of a number (%.14g): what Kong's exposition prints. */
function luaNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e15) return String(value);
  const text = value.toPrecision(14);
  const [mantissa, exponent] = text.split('e');
  const trimmed = mantissa!.includes('.') ? mantissa!.replace(/\.?0+$/, '') : mantissa!;
  if (exponent === undefined) return trimmed;
  const power = Number(exponent);
  return `${trimmed}e${power < 0 ? '-' : '+'}${String(Math.abs(power)).padStart(2, '0')}`;
}

/** Kong's text format: families sorted, each after its # HELP and # TYPE, series sorted. */
function exposition(families: Array<{ name: string; help: string; series: Series[] }>): string {
  const lines: string[] = [];
  for (const family of [...families].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (family.series.length === 0) continue;
    lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} gauge`);
    const rows = family.series.map(({ name, labels, value }) => {
      const text = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`).join(',');
      return `${name}${text ? `{${text}}` : ''} ${luaNumber(value)}`;
    });
    lines.push(...rows.sort());
  }
  return `${lines.join('\n')}\n`;
}

/**
 * What a Kong control plane's /metrics serves (kong/plugins/prometheus/exporter.lua, role
 * control_plane): the data planes it serves, and this node's own gauges. Requests are counted by
 * the data planes, each on its own Status API.
 */
function controlPlaneMetrics(options: MetricsRouteOptions): string {
  const planes = options.dataPlanes();
  const who = (p: DataPlaneNode) => ({ node_id: p.id, hostname: p.hostname, ip: p.ip });
  return exposition([
    {
      name: 'kong_data_plane_last_seen',
      help: 'Last time data plane contacted control plane',
      series: planes.map((p) => ({ name: 'kong_data_plane_last_seen', labels: who(p), value: p.last_seen })),
    },
    {
      name: 'kong_data_plane_config_hash',
      help: 'Config hash numeric value of the data plane',
      // exporter.lua config_hash_to_number: the hash (32 hex digits) as a number
      series: planes.map((p) => ({ name: 'kong_data_plane_config_hash', labels: who(p), value: Number(`0x${p.config_hash || '0'}`) })),
    },
    {
      name: 'kong_data_plane_version_compatible',
      help: 'Version compatible status of the data plane, 0 is incompatible',
      series: planes.map((p) => ({ name: 'kong_data_plane_version_compatible', labels: { ...who(p), kong_version: p.version ?? '' }, value: 1 })),
    },
    {
      name: 'kong_datastore_reachable',
      help: 'Datastore reachable from Kong, 0 is unreachable',
      series: [{ name: 'kong_datastore_reachable', labels: {}, value: 1 }],
    },
    {
      name: 'kong_node_info',
      help: 'Kong Node metadata information',
      series: [{ name: 'kong_node_info', labels: { node_id: options.nodeId, version: KONG_VERSION }, value: 1 }],
    },
  ]);
}

/**
 * `GET /metrics` on the Admin API (kong/plugins/prometheus/api.lua). With one embedded node it is
 * that node's own /metrics (its Status API, on the node's unix socket), as a Kong node in
 * traditional mode serves its own; a cluster's control plane serves its data planes' status.
 */
export function mountMetricsRoute(router: Router, options: MetricsRouteOptions): void {
  router.get('/metrics', async (ctx) => {
    if (!options.node) {
      ctx.type = 'text/plain; charset=UTF-8';
      ctx.body = controlPlaneMetrics(options);
      return;
    }
    try {
      const res = await options.node.get('/metrics');
      ctx.status = res.status;
      ctx.type = res.contentType;
      ctx.body = res.body;
    } catch (error) {
      options.log(`admin: GET /metrics: the data-plane node's status API does not answer: ${(error as Error).message}`);
      ctx.status = 500;
      ctx.body = { message: 'An unexpected error occurred' };
    }
  });
}
