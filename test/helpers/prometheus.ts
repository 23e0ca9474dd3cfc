import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { startLoopbackServer } from './loopback-server.ts';
import { pollUntil } from './poll.ts';

// A real Prometheus for the tests (Debian's /usr/bin/prometheus, 2.42), and a fake Kong node that
// serves Kong 3.9's /metrics text (kong/plugins/prometheus/exporter.lua) with counters the test moves.

const PROMETHEUS_BIN = '/usr/bin/prometheus';
export const PROMTOOL_BIN = '/usr/bin/promtool';

export interface PromSample {
  metric: Record<string, string>;
  value: number;
}

export interface RunningPrometheus {
  url: string;
  /** An instant query; `time` pins the evaluation (default: Prometheus's now). */
  query(promql: string, time?: Date): Promise<PromSample[]>;
  /** Resolves once every target has been scraped at least once after this call. */
  nextScrape(): Promise<void>;
  /** The time of the newest sample of `selector` (ms precision, as Prometheus stores it). */
  lastSampleTime(selector: string): Promise<Date>;
  output(): string;
  dispose(): Promise<void>;
}

export interface PrometheusOptions {
  /** host:port targets of one job, `kong`, scraped at /metrics every `scrapeIntervalSeconds`. */
  targets?: string[];
  /** A whole configuration instead (prometheus.yml as an object). */
  config?: Record<string, unknown>;
  scrapeIntervalSeconds?: number;
  /** A TSDB directory to start from (e.g. made by `backfill`); it is not deleted. */
  storageDir?: string;
}

/** The configuration `targets` stands for: one job scraping the given Kong Status APIs. */
function scrapeConfig(targets: string[], scrapeIntervalSeconds = 1): Record<string, unknown> {
  return {
    global: { scrape_interval: `${scrapeIntervalSeconds}s`, evaluation_interval: `${scrapeIntervalSeconds}s` },
    scrape_configs: [{ job_name: 'kong', metrics_path: '/metrics', static_configs: [{ targets }] }],
  };
}

/**
 * Starts Prometheus on a free loopback port with a temporary TSDB (or `storageDir`), waits until
 * /-/ready, and stops it (SIGTERM, then waits for the exit) on dispose.
 */
export async function startPrometheus(options: PrometheusOptions = {}): Promise<RunningPrometheus> {
  const config = options.config ?? scrapeConfig(options.targets ?? [], options.scrapeIntervalSeconds);
  const { url, output, dispose } = await startLoopbackServer({
    name: 'Prometheus',
    bin: PROMETHEUS_BIN,
    files: { 'prometheus.yml': stringify(config) },
    args: (dir, port) => [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${options.storageDir ?? join(dir, 'data')}`,
      // Backfilled history is older than the default 15 days: keep it.
      '--storage.tsdb.retention.time=100y',
      `--web.listen-address=127.0.0.1:${port}`,
    ],
  });
  const api = async (path: string, params: Record<string, string>) => {
    const response = await fetch(`${url}${path}?${new URLSearchParams(params).toString()}`);
    const body = (await response.json()) as { status: string; error?: string; data: any };
    if (body.status !== 'success') throw new Error(`Prometheus: ${body.error ?? response.status}`);
    return body.data;
  };
  const query = async (promql: string, time?: Date): Promise<PromSample[]> => {
    const data = await api('/api/v1/query', { query: promql, ...(time ? { time: (time.getTime() / 1000).toFixed(3) } : {}) });
    const result = data.result as Array<{ metric: Record<string, string>; value: [number, string] }>;
    return result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };
  const scrapes = async () => {
    const data = await api('/api/v1/targets', { state: 'active' });
    const targets = data.activeTargets as Array<{ lastScrape: string; health: string }>;
    return targets.map((t) => ({ at: Date.parse(t.lastScrape), health: t.health }));
  };
  return {
    url,
    query,
    async nextScrape() {
      const since = Date.now();
      await pollUntil('a scrape of every target', async () => {
        const targets = await scrapes();
        return targets.length > 0 && targets.every((t) => t.at > since && t.health === 'up');
      });
      // /targets says a scrape began; its samples (stamped with its start) are queryable once it
      // has been written, which a loaded machine can delay past the first query
      await pollUntil("that scrape's samples", async () => {
        const [oldest] = await query('min(timestamp(up))');
        return oldest !== undefined && oldest.value * 1000 >= since;
      });
    },
    async lastSampleTime(selector) {
      const [sample] = await query(`max(timestamp(${selector}))`);
      if (!sample) throw new Error(`no sample of ${selector}`);
      return new Date(Math.round(sample.value * 1000));
    },
    output,
    dispose,
  };
}

/**
 * Writes `openMetrics` (OpenMetrics text with timestamps, ending `# EOF`) into a new TSDB
 * directory with `promtool tsdb create-blocks-from openmetrics`: history Prometheus would
 * otherwise need days of scraping to hold. Returns the directory; the caller removes it.
 */
export async function backfill(openMetrics: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tsdb-'));
  writeFileSync(join(dir, 'input.om'), openMetrics);
  await promisify(execFile)(PROMTOOL_BIN, ['tsdb', 'create-blocks-from', 'openmetrics', join(dir, 'input.om'), join(dir, 'data')]);
  return join(dir, 'data');
}

// ---------------------------------------------------------------------------------------------
// A fake Kong node: /metrics as Kong 3.9's prometheus plugin writes it.

/** Kong's buckets (exporter.lua): request and upstream latency, and Kong's own latency. */
const UPSTREAM_LATENCY_BUCKETS = [25, 50, 80, 100, 250, 400, 700, 1000, 2000, 5000, 10000, 30000, 60000];
const KONG_LATENCY_BUCKETS = [1, 2, 5, 7, 10, 15, 20, 30, 50, 75, 100, 200, 500, 750, 1000, 3000, 6000];

interface Family {
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  /** Label names in Kong's order. */
  labels: string[];
  buckets?: number[];
}

/** The families the fake serves, named and labelled as exporter.lua registers them (prefix kong_). */
const FAMILIES: Record<string, Family> = {
  kong_http_requests_total: {
    help: 'HTTP status codes per consumer/service/route in Kong',
    type: 'counter',
    labels: ['service', 'route', 'code', 'source', 'workspace', 'consumer'],
  },
  kong_bandwidth_bytes: {
    help: 'Total bandwidth (ingress/egress) throughput in bytes',
    type: 'counter',
    labels: ['service', 'route', 'direction', 'workspace', 'consumer'],
  },
  kong_request_latency_ms: {
    help: 'Total latency incurred during requests for each service/route in Kong',
    type: 'histogram',
    labels: ['service', 'route', 'workspace'],
    buckets: UPSTREAM_LATENCY_BUCKETS,
  },
  kong_upstream_latency_ms: {
    help: 'Latency added by upstream response for each service/route in Kong',
    type: 'histogram',
    labels: ['service', 'route', 'workspace'],
    buckets: UPSTREAM_LATENCY_BUCKETS,
  },
  kong_kong_latency_ms: {
    help: 'Latency added by Kong and enabled plugins for each service/route in Kong',
    type: 'histogram',
    labels: ['service', 'route', 'workspace'],
    buckets: KONG_LATENCY_BUCKETS,
  },
  kong_nginx_connections_total: { help: 'Number of connections by subsystem', type: 'gauge', labels: ['node_id', 'subsystem', 'state'] },
  kong_nginx_requests_total: { help: 'Number of requests total', type: 'gauge', labels: ['node_id', 'subsystem'] },
  kong_datastore_reachable: { help: 'Datastore reachable from Kong, 0 is unreachable', type: 'gauge', labels: [] },
  kong_node_info: { help: 'Kong Node metadata information', type: 'gauge', labels: ['node_id', 'version'] },
  kong_memory_lua_shared_dict_bytes: {
    help: 'Allocated slabs in bytes in a shared_dict',
    type: 'gauge',
    labels: ['node_id', 'shared_dict', 'kong_subsystem'],
  },
  // The edge plugin's counters (the names issue 24 fixes; see packages/usage/series.ts).
  kong_animal_store_edge_bans_total: { help: 'Bans started by the animal-store-edge plugin', type: 'counter', labels: ['consumer'] },
  kong_animal_store_edge_banned_requests_total: {
    help: 'Requests refused while banned by the animal-store-edge plugin',
    type: 'counter',
    labels: ['consumer'],
  },
  kong_animal_store_edge_checksum_failures_total: {
    help: 'Bearer tokens refused for a bad checksum by the animal-store-edge plugin',
    type: 'counter',
    labels: [],
  },
};

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** What the tests make a Kong node count. The fake moves counters; a real data plane would be sent real requests. */
interface KongMetricsSource {
  /** host:port, what Prometheus scrapes (at /metrics). */
  target: string;
  /** The node's Status API base URL, what `usage --status-url` takes. */
  statusUrl: string;
  /** `n` requests of `consumer` ("" for none) on `route`, answered `code`, each taking `latencyMs`. */
  requests(r: { consumer: string; code: number; n: number; route?: string; service?: string; latencyMs?: number }): void;
  /** `n` requests of `consumer` refused while banned (Kong counts them as 429 with consumer ""). */
  bannedRequests(consumer: string, n: number): void;
  bansStarted(consumer: string, n: number): void;
  checksumFailures(n: number): void;
  dispose(): Promise<void>;
}

export interface FakeKongNode extends KongMetricsSource {
  nodeId: string;
  /** Series as the fake's Kong would hold them: full series text → value. */
  series: Map<string, number>;
  /** Creates a series at 0 (Kong creates one on its first increment; tests that need exact increase() start from 0). */
  touch(family: string, labels: Record<string, string>): void;
  /** Forgets every counter, as a restarted node does. */
  restart(): void;
  /** The /metrics body. */
  exposition(): string;
  scrapes: number;
}

const NODE_SHARED_DICTS = ['kong', 'kong_rate_limiting_counters', 'prometheus_metrics', 'animal_store_edge'];

/** A fake Kong node on a loopback port: GET /metrics answers Kong's exposition text. */
export async function startFakeKongNode(nodeId = '6b6fd3a4-1b5c-4d1e-9e7a-3c5f0b8a2d11'): Promise<FakeKongNode> {
  const series = new Map<string, number>();
  const key = (family: string, labels: Record<string, string>) => {
    const names = FAMILIES[family]!.labels;
    const text = names.map((name) => `${name}="${escapeLabel(labels[name] ?? '')}"`).join(',');
    return names.length > 0 ? `${family}{${text}}` : family;
  };
  const add = (family: string, labels: Record<string, string>, n: number) => {
    const k = key(family, labels);
    series.set(k, (series.get(k) ?? 0) + n);
  };
  const observe = (family: string, labels: Record<string, string>, value: number, n: number) => {
    const spec = FAMILIES[family]!;
    const base = key(family, labels).slice(family.length, -1); // `{service="…",…,workspace="…"`
    const bump = (name: string, by: number) => series.set(name, (series.get(name) ?? 0) + by);
    bump(`${family}_count${base}}`, n);
    bump(`${family}_sum${base}}`, value * n);
    // exporter's histogram: every bucket the value fits in (only those exist), and +Inf.
    for (const bound of spec.buckets!) if (value <= bound) bump(`${family}_bucket${base},le="${bound}"}`, n);
    bump(`${family}_bucket${base},le="+Inf"}`, n);
  };
  const gauges = () => {
    const out = new Map<string, number>();
    const gauge = (family: string, labels: Record<string, string>, value: number) => out.set(key(family, labels), value);
    const total = [...series].filter(([k]) => k.startsWith('kong_http_requests_total{')).reduce((sum, [, v]) => sum + v, 0);
    const connections = { accepted: 10 + node.scrapes, handled: 10 + node.scrapes, total, active: 3, reading: 0, writing: 1, waiting: 2 };
    for (const [state, value] of Object.entries(connections)) {
      gauge('kong_nginx_connections_total', { node_id: nodeId, subsystem: 'http', state }, value);
    }
    gauge('kong_nginx_requests_total', { node_id: nodeId, subsystem: 'http' }, total);
    gauge('kong_datastore_reachable', {}, 1);
    gauge('kong_node_info', { node_id: nodeId, version: '3.9.1' }, 1);
    for (const [i, dict] of NODE_SHARED_DICTS.entries()) gauge('kong_memory_lua_shared_dict_bytes', { node_id: nodeId, shared_dict: dict, kong_subsystem: 'http' }, 40960 * (i + 1));
    return out;
  };
  const exposition = () => {
    const all = new Map([...series, ...gauges()]);
    const lines: string[] = [];
    for (const [family, spec] of Object.entries(FAMILIES)) {
      const prefixes = spec.type === 'histogram' ? ['_bucket{', '_count{', '_sum{'].map((suffix) => family + suffix) : [`${family}{`];
      const mine = [...all].filter(([k]) => k === family || prefixes.some((prefix) => k.startsWith(prefix)));
      if (mine.length === 0) continue;
      lines.push(`# HELP ${family} ${spec.help}`, `# TYPE ${family} ${spec.type}`);
      for (const [k, v] of mine.sort(([a], [b]) => (a < b ? -1 : 1))) lines.push(`${k} ${v}`);
    }
    return `${lines.join('\n')}\n`;
  };
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end('{"message":"Not found"}\n');
      return;
    }
    node.scrapes += 1;
    res.writeHead(200, { 'content-type': 'text/plain; charset=UTF-8' }).end(exposition());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const node: FakeKongNode = {
    nodeId,
    series,
    scrapes: 0,
    target: `127.0.0.1:${port}`,
    statusUrl: `http://127.0.0.1:${port}`,
    touch: (family, labels) => add(family, labels, 0),
    requests({ consumer, code, n, route = 'animal-store-v1', service = 'animal-store-backend', latencyMs = 42 }) {
      const source = code === 429 || code === 401 ? 'kong' : 'service';
      add('kong_http_requests_total', { service, route, code: String(code), source, workspace: 'default', consumer }, n);
      add('kong_bandwidth_bytes', { service, route, direction: 'ingress', workspace: 'default', consumer }, 300 * n);
      add('kong_bandwidth_bytes', { service, route, direction: 'egress', workspace: 'default', consumer }, 900 * n);
      const labels = { service, route, workspace: 'default' };
      observe('kong_request_latency_ms', labels, latencyMs, n);
      observe('kong_kong_latency_ms', labels, 1, n);
      if (source === 'service') observe('kong_upstream_latency_ms', labels, Math.max(0, latencyMs - 1), n);
    },
    bannedRequests(consumer, n) {
      add('kong_animal_store_edge_banned_requests_total', { consumer }, n);
      node.requests({ consumer: '', code: 429, n, latencyMs: 1 });
    },
    bansStarted: (consumer, n) => add('kong_animal_store_edge_bans_total', { consumer }, n),
    checksumFailures(n) {
      add('kong_animal_store_edge_checksum_failures_total', {}, n);
      node.requests({ consumer: '', code: 401, n, latencyMs: 1 });
    },
    restart: () => series.clear(),
    exposition,
    dispose: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return node;
}
