import { Agent, request } from 'node:http';
import { startDataPlaneNode } from '../../gateway/local/index.ts';
import { PROMETHEUS_DICT_SIZE } from '../../gateway/local/index.ts';
import { buildSnapshot } from '../helpers/snapshot-builder.ts';
import { startUpstream } from '../helpers/upstream.ts';

/**
 * The prometheus plugin's cardinality with many active consumers (Kong/kong-plugin-prometheus
 * #36): a data-plane node running kong.yml's plugin settings (global key-auth, prometheus with
 * per_consumer, status code, latency and bandwidth metrics) with N consumers, each sending one
 * request with its own key; then the size of /metrics, its series, the time a scrape takes, and
 * how much of the prometheus_metrics shared dict the series use.
 *
 *   node --import tsx test/bench/prometheus-cardinality.ts [--consumers 10000] [--dict 16m] [--without-plugin] [--json]
 */
const arg = (name: string, fallback: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1]! : fallback);
const consumers = Number(arg('--consumers', '10000'));
const dictSize = arg('--dict', PROMETHEUS_DICT_SIZE);
const CONCURRENCY = 32;

const log = (message: string) => process.stderr.write(`[cardinality] ${message}\n`);

const upstream = await startUpstream((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
});
const names = Array.from({ length: consumers }, (_, i) => `consumer-${String(i).padStart(5, '0')}`);
const keyAuth = {
  key_names: ['apikey'],
  hide_credentials: true,
  anonymous: null,
  key_in_header: true,
  key_in_query: false,
  key_in_body: false,
  run_on_preflight: true,
  realm: null,
};
/** Without the plugin's instance (--without-plugin): what the node's memory is without the series. */
const withPlugin = !process.argv.includes('--without-plugin');
const prometheus = {
  per_consumer: true,
  status_code_metrics: true,
  latency_metrics: true,
  bandwidth_metrics: true,
  upstream_health_metrics: false,
  ai_metrics: false,
};
log(`snapshot with ${consumers} consumers and keys`);
const snapshot = buildSnapshot({
  services: [{ name: 'animal-store-backend', url: upstream.url }],
  routes: [{ name: 'animal-store-v1', service: 'animal-store-backend', paths: ['/v1/'] }],
  consumers: names.map((username) => ({ username })),
  keyauth_credentials: names.map((username) => ({ consumer: username, key: `key-${username}` })),
  plugins: [{ name: 'key-auth', config: keyAuth }, ...(withPlugin ? [{ name: 'prometheus', config: prometheus }] : [])],
});

const node = await startDataPlaneNode({
  plugins: ['key-auth', 'prometheus'],
  workerProcesses: 1,
  statusListen: '127.0.0.1:0',
  prometheusDictSize: dictSize,
  snapshot,
});
try {
  log(`${consumers} requests, one per consumer, ${CONCURRENCY} at a time (dict ${dictSize})`);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const { hostname, port } = new URL(node.proxyUrl);
  const get = (apikey: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: hostname, port, path: '/v1/pets', agent, headers: { apikey } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  let next = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < names.length) {
        const name = names[next++]!;
        if ((await get(`key-${name}`)) !== 200) failed += 1;
      }
    }),
  );
  const sendMs = performance.now() - started;
  if (failed > 0) throw new Error(`${failed} requests were not answered 200`);

  // workers record their Lua VM's size at most every 10 s, from the log phase (Kong's
  // update_lua_mem): one more request after that, so that the figure includes the label trees
  await new Promise((resolve) => setTimeout(resolve, 10_500));
  if ((await get(`key-${names[0]!}`)) !== 200) throw new Error('the last request was not answered 200');
  // counters reach the dict within the worker's sync interval (1 s); a scrape syncs its worker
  const scrape = async () => {
    const t0 = performance.now();
    const res = await fetch(`${node.statusUrl!}/metrics`);
    const body = await res.text();
    return { body, ms: performance.now() - t0 };
  };
  await scrape();
  const { body, ms } = await scrape();
  const lines = body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  const value = (pattern: RegExp) => Number(pattern.exec(body)?.[1] ?? NaN);
  agent.destroy();
  const result = {
    consumers,
    dictSize,
    requestsPerSecond: Math.round(consumers / (sendMs / 1000)),
    metricsBytes: Buffer.byteLength(body),
    series: lines.length,
    perConsumerSeries: lines.filter((line) => /consumer="consumer-\d+"/.test(line)).length,
    scrapeMs: Math.round(ms),
    dictAllocatedBytes: value(/^kong_memory_lua_shared_dict_bytes\{[^}]*shared_dict="prometheus_metrics"[^}]*\} (\d+)$/m),
    dictCapacityBytes: value(/^kong_memory_lua_shared_dict_total_bytes\{[^}]*shared_dict="prometheus_metrics"[^}]*\} (\d+)$/m),
    workerLuaVmBytes: value(/^kong_memory_workers_lua_vms_bytes\{[^}]*\} (\d+)$/m),
    metricErrors: value(/^kong_nginx_metric_errors_total (\d+)$/m),
    requestsSent: consumers + 1,
    requestsCounted: lines
      .filter((line) => line.startsWith('kong_http_requests_total{'))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0),
  };
  const mb = (bytes: number) => `${(bytes / 1048576).toFixed(2)} MiB`;
  log(`/metrics: ${mb(result.metricsBytes)}, ${result.series} series (${result.perConsumerSeries} with a consumer label), scrape ${result.scrapeMs} ms`);
  log(`prometheus_metrics: ${mb(result.dictAllocatedBytes)} allocated of ${mb(result.dictCapacityBytes)}; errors ${result.metricErrors}; requests counted ${result.requestsCounted} of ${result.requestsSent}`);
  log(`worker Lua VM: ${mb(result.workerLuaVmBytes)} (the snapshot's ${consumers} consumers and keys, and the label trees, included)`);
  if (process.argv.includes('--json')) console.log(JSON.stringify(result));
} finally {
  await node.stop();
  await upstream.close();
}
