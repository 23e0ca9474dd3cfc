import { connect } from 'node:net';
import test from 'ava';
import { PLUGINS_DIR } from '../../helpers/gateway-files.ts';
import { startTestNode, type TestNode } from '../../helpers/data-plane.ts';
import { httpGet } from '../../helpers/http-request.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { startUpstream, type Upstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, mockUpstream, plugin } from './kit.ts';

// Kong 3.9.3's prometheus plugin on a data-plane node: spec/03-plugins/26-prometheus/
// 02-access_spec.lua (ACCESS:<line>), 04-status_api_spec.lua (STATUS:<line>) and
// 07-optional_fields_spec.lua (OPTIONAL:<line>), transcribed where the node runs what they test,
// through the Status API (Kong's specs read the Admin API's /metrics, the same exporter). Not
// here: gRPC and stream (not run by the data plane), upstream_target_health (no upstream
// entities), AI metrics (no AI plugins). The exposition's formats are in
// test/data-plane/lua/prometheus_spec.lua.

const ACCESS = 'spec/03-plugins/26-prometheus/02-access_spec.lua';
const STATUS = 'spec/03-plugins/26-prometheus/04-status_api_spec.lua';
const OPTIONAL = 'spec/03-plugins/26-prometheus/07-optional_fields_spec.lua';
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** kong/plugins/prometheus/schema.lua's defaults, all off. */
const prometheusConfig = (config: Record<string, boolean> = {}) => ({
  per_consumer: false,
  status_code_metrics: false,
  ai_metrics: false,
  latency_metrics: false,
  bandwidth_metrics: false,
  upstream_health_metrics: false,
  ...config,
});
const ALL_ON = { status_code_metrics: true, latency_metrics: true, bandwidth_metrics: true, upstream_health_metrics: true };
const SWITCHES = {
  status_code_metrics: 'kong_http_requests_total',
  latency_metrics: 'kong_kong_latency_ms',
  bandwidth_metrics: 'kong_bandwidth_bytes',
} as const;

let upstream: Upstream;
let node: TestNode;

test.before(async () => {
  upstream = await startUpstream(async (req, res) => {
    if (req.url.startsWith('/slow')) await new Promise((resolve) => setTimeout(resolve, 60));
    mockUpstream(req, res);
  });
  const routeOn = (name: string, host: string) => ({ name, service: 'mock-service', hosts: [host] });
  node = await startTestNode({
    plugins: [...BUNDLED_PLUGINS, 'prometheus'],
    statusListen: '127.0.0.1:0',
    snapshot: {
      services: [{ name: 'mock-service', url: upstream.url }],
      routes: [
        { name: 'http-route', service: 'mock-service', paths: ['/'], methods: ['GET'] },
        routeOn('keyed', 'keyed.test'),
        ...Object.keys(SWITCHES).map((name) => routeOn(`switch-${name}`, `${name}.test`)),
        routeOn('latency', 'latency.test'),
        routeOn('bandwidth', 'bandwidth.test'),
      ],
      consumers: [{ username: 'alice' }],
      keyauth_credentials: [{ consumer: 'alice', key: 'alice-key' }],
      plugins: [
        { name: 'prometheus', config: prometheusConfig(ALL_ON) },
        // ACCESS:375's per-consumer Kong, as a route's instance (it wins over the global one)
        { name: 'prometheus', route: 'keyed', config: prometheusConfig({ ...ALL_ON, per_consumer: true }) },
        plugin('key-auth', { route: 'keyed' }),
        // ACCESS:519's granular switches, one route each
        ...Object.keys(SWITCHES).map((name) => ({ name: 'prometheus', route: `switch-${name}`, config: prometheusConfig({ [name]: true }) })),
        { name: 'prometheus', route: 'latency', config: prometheusConfig({ latency_metrics: true }) },
        { name: 'prometheus', route: 'bandwidth', config: prometheusConfig({ bandwidth_metrics: true }) },
      ],
    },
  });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

async function metrics(target: TestNode = node): Promise<string> {
  const res = await httpGet(`${target.statusUrl!}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${res.body}`);
  return res.body;
}

/** Polls /metrics until it has `line` (counters reach the dict within the sync interval, 1 s). */
async function metricsWith(line: string, target: TestNode = node): Promise<string> {
  let body = '';
  await pollUntil(`/metrics to show ${line}`, async () => (body = await metrics(target)).includes(line));
  return body;
}

/** The series of a family (a histogram's _bucket, _count and _sum included). */
const series = (body: string, family: string) => body.split('\n').filter((line) => /^[^#{ ]+/.exec(line)?.[0].replace(/_(bucket|count|sum)$/, '') === family);

test.serial(`increments the count for proxied requests (${ACCESS}:103, ${STATUS}:191)`, async (t) => {
  t.is((await httpGet(node.url('/status/200'))).status, 200);
  let body = await metricsWith('kong_http_requests_total{service="mock-service",route="http-route",code="200",source="service",workspace="default",consumer=""} 1\n');
  t.true(body.includes('kong_nginx_metric_errors_total 0\n'));

  t.is((await httpGet(node.url('/status/400'))).status, 400);
  body = await metricsWith('kong_http_requests_total{service="mock-service",route="http-route",code="400",source="service",workspace="default",consumer=""} 1\n');
  t.true(body.includes('kong_nginx_metric_errors_total 0\n'));
  for (const family of ['kong_kong_latency_ms', 'kong_upstream_latency_ms', 'kong_request_latency_ms']) {
    t.regex(body, new RegExp(`^${family}_bucket\\{service="mock-service",route="http-route",workspace="default",le="\\+Inf"\\} 2$`, 'm'));
  }
  t.regex(body, /^kong_bandwidth_bytes\{service="mock-service",route="http-route",direction="ingress",workspace="default",consumer=""\} \d+$/m);
  t.regex(body, /^kong_bandwidth_bytes\{service="mock-service",route="http-route",direction="egress",workspace="default",consumer=""\} \d+$/m);
});

test(`does not log error if no service was matched (${ACCESS}:220)`, async (t) => {
  const before = node.logs.length;
  t.is((await httpGet(node.url('/no-route-match-in-kong'), { method: 'POST' })).status, 404);
  await metrics();
  t.deepEqual(node.logs.slice(before).filter((line) => line.includes('[error]')), []);
});

test(`scrape response has metrics and comments only, and the node's gauges (${ACCESS}:250-304, ${STATUS}:299, ${OPTIONAL}:16)`, async (t) => {
  const body = await metrics();
  for (const line of body.trimEnd().split('\n')) t.regex(line, /^(# (HELP|TYPE) kong_|kong_)/);
  t.true(body.includes('kong_datastore_reachable 1\n'));
  t.regex(body, new RegExp(`^kong_memory_workers_lua_vms_bytes\\{node_id="${UUID}",pid="\\d+",kong_subsystem="http"\\} \\d+$`, 'm'));
  t.regex(body, new RegExp(`^kong_memory_lua_shared_dict_total_bytes\\{node_id="${UUID}",shared_dict="prometheus_metrics",kong_subsystem="http"\\} 16777216$`, 'm'));
  t.regex(body, new RegExp(`^kong_memory_lua_shared_dict_bytes\\{node_id="${UUID}",shared_dict="prometheus_metrics",kong_subsystem="http"\\} \\d+$`, 'm'));
  for (const state of ['accepted', 'active', 'handled', 'reading', 'total', 'waiting', 'writing']) {
    t.regex(body, new RegExp(`^kong_nginx_connections_total\\{node_id="${UUID}",subsystem="http",state="${state}"\\} \\d+$`, 'm'), state);
  }
  t.regex(body, new RegExp(`^kong_nginx_requests_total\\{node_id="${UUID}",subsystem="http"\\} \\d+$`, 'm'));
  t.regex(body, /^kong_nginx_timers\{state="running"\} \d+$/m);
  t.regex(body, /^kong_nginx_timers\{state="pending"\} \d+$/m);
  t.regex(body, new RegExp(`^kong_node_info\\{node_id="${UUID}",version="3\\.9\\.3"\\} 1$`, 'm'));
  t.true(body.includes('# HELP kong_http_requests_total HTTP status codes per consumer/service/route in Kong\n# TYPE kong_http_requests_total counter\n'));
  t.false(body.includes('http_consumer_status'), `does not expose per consumer metrics by default (${ACCESS}:304)`);
});

test(`per-consumer metrics: the consumer's username, "" when none was identified (${ACCESS}:442, 486)`, async (t) => {
  t.is((await httpGet(node.url('/status/200'), { headers: { host: 'keyed.test', apikey: 'alice-key' } })).status, 200);
  t.is((await httpGet(node.url('/status/400'), { headers: { host: 'keyed.test', apikey: 'alice-key' } })).status, 400);
  t.is((await httpGet(node.url('/status/200'), { headers: { host: 'keyed.test' } })).status, 401);
  const body = await metricsWith('kong_http_requests_total{service="mock-service",route="keyed",code="401",source="kong",workspace="default",consumer=""} 1\n');
  t.true(body.includes('kong_http_requests_total{service="mock-service",route="keyed",code="200",source="service",workspace="default",consumer="alice"} 1\n'));
  t.true(body.includes('kong_http_requests_total{service="mock-service",route="keyed",code="400",source="service",workspace="default",consumer="alice"} 1\n'));
  t.regex(body, /^kong_bandwidth_bytes\{service="mock-service",route="keyed",direction="egress",workspace="default",consumer="alice"\} \d+$/m);
  t.true(body.includes('kong_nginx_metric_errors_total 0\n'));
});

for (const [name, family] of Object.entries(SWITCHES)) {
  test(`granular metrics switch: ${name} exports ${family} and nothing else of the route (${ACCESS}:581, 606)`, async (t) => {
    t.is((await httpGet(node.url('/status/200'), { headers: { host: `${name}.test` } })).status, 200);
    const route = `route="switch-${name}"`;
    let body = '';
    await pollUntil(`${family} for switch-${name}`, async () => series((body = await metrics()), family).some((line) => line.includes(route)));
    for (const [other, otherFamily] of Object.entries(SWITCHES)) {
      if (other === name) continue;
      t.false(body.split('\n').some((line) => line.startsWith(otherFamily) && line.includes(route)), `${otherFamily} for ${route}`);
    }
  });
}

test('latency histograms: Kong buckets; a request counts in every bucket its latency fits in (exporter.lua)', async (t) => {
  t.is((await httpGet(node.url('/slow'), { headers: { host: 'latency.test' } })).status, 200);
  const labels = 'service="mock-service",route="latency",workspace="default"';
  const body = await metricsWith(`kong_upstream_latency_ms_count{${labels}} 1\n`);
  const buckets = (family: string) =>
    series(body, family).filter((line) => line.startsWith(`${family}_bucket{${labels}`)).map((line) => /le="([^"]+)"/.exec(line)![1]);
  // the upstream took ≥ 60 ms: not in le="25" or "50", in "80" (unless the machine stalled) and up
  const upstreamBuckets = buckets('kong_upstream_latency_ms');
  t.false(upstreamBuckets.includes('25') || upstreamBuckets.includes('50'), upstreamBuckets.join());
  t.deepEqual(upstreamBuckets.slice(-4), ['10000', '30000', '60000', '+Inf']);
  t.deepEqual(
    buckets('kong_kong_latency_ms').slice(-3),
    ['3000', '6000', '+Inf'],
    'kong_kong_latency_ms ends at 6000 (KONG_LATENCY_BUCKETS)',
  );
  t.deepEqual(buckets('kong_request_latency_ms').slice(-2), ['60000', '+Inf']);
  const sum = Number(/kong_upstream_latency_ms_sum\{[^}]*route="latency"[^}]*\} (\S+)/.exec(body)![1]);
  t.true(sum >= 59, String(sum));
});

/** Sends `request` on a new connection and counts every byte of the answer until nginx closes it. */
function exchange(url: string, request: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let received = 0;
    const socket = connect(Number(port), hostname, () => socket.write(request));
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}

test('bandwidth: ingress is the request as received (request_length), egress the response as sent (bytes_sent)', async (t) => {
  const request = 'POST /status/201 HTTP/1.1\r\nHost: bandwidth.test\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello';
  const sent = await exchange(node.proxyUrl, request);
  const labels = (direction: string) => `kong_bandwidth_bytes{service="mock-service",route="bandwidth",direction="${direction}",workspace="default",consumer=""}`;
  const body = await metricsWith(`${labels('ingress')} ${Buffer.byteLength(request)}\n`);
  t.true(body.includes(`${labels('egress')} ${sent}\n`), `${sent} bytes sent: ${series(body, 'kong_bandwidth_bytes').join('\n')}`);
});

test(`/metrics on the Status API: Kong's routes, trailing slash, 404 and 405 (kong/status/init.lua, kong/api/routes/health.lua)`, async (t) => {
  const metricsRes = await httpGet(`${node.statusUrl!}/metrics/`);
  t.is(metricsRes.status, 200);
  t.is(metricsRes.headers['content-type'], 'text/plain; charset=UTF-8');
  t.is(metricsRes.headers.server, 'kong/3.9.3');
  t.is((await httpGet(`${node.statusUrl!}/metrics`, { method: 'POST' })).status, 405);
  t.deepEqual((await httpGet(`${node.statusUrl!}/nothing`)).json, { message: 'Not found' });
  const status = await httpGet(`${node.statusUrl!}/status?unit=k&scale=1`);
  t.is(status.status, 200);
  t.regex(status.json.memory.lua_shared_dicts.prometheus_metrics.capacity, /^16384\.0 KiB$/);
  t.true(status.json.server.total_requests > 0);
  t.is(status.json.database, undefined, 'a data plane has no database (kong/api/routes/health.lua)');
  t.is((await httpGet(`${node.statusUrl!}/status?unit=x`)).status, 400);
});

test('every worker adds to the same series: two workers, many connections', async (t) => {
  const two = await startTestNode({
    plugins: ['prometheus'],
    workerProcesses: 2,
    statusListen: '127.0.0.1:0',
    snapshot: {
      services: [{ name: 'svc', url: upstream.url }],
      routes: [{ name: 'r', service: 'svc', paths: ['/'] }],
      plugins: [{ name: 'prometheus', config: prometheusConfig({ status_code_metrics: true }) }],
    },
  });
  try {
    // a new connection each time: nginx hands connections to both workers
    const results = await Promise.all(Array.from({ length: 60 }, () => httpGet(two.url('/status/200'))));
    t.true(results.every((r) => r.status === 200));
    await metricsWith('kong_http_requests_total{service="svc",route="r",code="200",source="service",workspace="default",consumer=""} 60\n', two);
    t.pass();
  } finally {
    await two.dispose();
  }
});

test(`without a prometheus instance only the node's own gauges are served (${OPTIONAL}:120)`, async (t) => {
  const bare = await startTestNode({
    plugins: ['prometheus'],
    statusListen: '127.0.0.1:0',
    snapshot: { services: [{ name: 'svc', url: upstream.url }], routes: [{ name: 'r', service: 'svc', paths: ['/'] }] },
  });
  try {
    t.is((await httpGet(bare.url('/status/200'))).status, 200);
    const body = await metrics(bare);
    for (const family of ['kong_http_requests_total', 'kong_kong_latency_ms', 'kong_upstream_latency_ms', 'kong_request_latency_ms', 'kong_bandwidth_bytes', 'kong_nginx_metric_errors_total']) {
      t.false(body.includes(family), family);
    }
    t.true(body.includes('kong_memory_lua_shared_dict_bytes'));
    t.regex(body, /^kong_nginx_connections_total\{.*state="accepted"\} \d+$/m);
  } finally {
    await bare.dispose();
  }
});

test("a plugin's own counters through the exporter, with Kong's prefix: the edge plugin's bans", async (t) => {
  const edge = await startTestNode({
    plugins: ['key-auth', 'rate-limiting', 'prometheus', 'animal-store-edge'],
    pluginsDir: PLUGINS_DIR,
    statusListen: '127.0.0.1:0',
    snapshot: {
      services: [{ name: 'svc', url: upstream.url }],
      routes: [{ name: 'r', service: 'svc', paths: ['/'] }],
      consumers: [{ username: 'o"brien' }],
      keyauth_credentials: [{ consumer: 'o"brien', key: 'obrien-key' }],
      plugins: [
        { name: 'prometheus', config: prometheusConfig({ status_code_metrics: true, per_consumer: true }) },
        {
          name: 'animal-store-edge',
          config: {
            key_header: 'apikey',
            realm: 'test',
            ban_threshold: 1,
            ban_window: 60,
            ban_duration: 900,
            dict_name: 'animal_store_edge',
            // the key below is stored in clear
            accept_plaintext_keys: true,
          },
        },
        plugin('key-auth', {}, { key_in_query: false }),
        plugin('rate-limiting', {}, { day: 1 }),
      ],
    },
  });
  try {
    const call = (authorization: string) => httpGet(edge.url('/status/200'), { headers: { authorization } });
    // 1 allowed, 2 refused by the plan (the 2nd 429 passes ban_threshold 1), then banned. A day's
    // limit, not a minute's: five requests straddling a minute boundary let a second one through.
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call('Bearer obrien-key')).status);
    t.deepEqual(statuses, [200, 429, 429, 429, 429]);
    // an ask_ key whose checksum is wrong: refused before any look-up
    t.is((await call(`Bearer ask_${'A'.repeat(49)}`)).status, 401);
    t.is((await call('Basic whatever')).status, 401, 'no key at all: not a checksum failure');
    const body = await metricsWith('kong_animal_store_edge_banned_requests_total{consumer="o\\"brien"} 2\n', edge);
    t.true(body.includes('# HELP kong_animal_store_edge_bans_total Bans started by the animal-store-edge plugin\n# TYPE kong_animal_store_edge_bans_total counter\n'));
    t.true(body.includes('kong_animal_store_edge_bans_total{consumer="o\\"brien"} 1\n'));
    t.true(body.includes('kong_animal_store_edge_checksum_failures_total 1\n'));
    // banned requests are refused before key-auth: Kong counts them with no consumer
    t.true(body.includes('kong_http_requests_total{service="svc",route="r",code="429",source="kong",workspace="default",consumer=""} 2\n'));
    t.true(body.includes('kong_http_requests_total{service="svc",route="r",code="429",source="kong",workspace="default",consumer="o\\"brien"} 2\n'));
  } finally {
    await edge.dispose();
  }
});
