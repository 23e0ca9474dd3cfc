import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request, type JsonResponse } from '../helpers/backend.ts';
import { readGatewaySettings, type GatewayOptions } from '../../gateway/local/index.ts';
import { startEchoUpstream, startTestGateway, writeConfig, type EchoUpstream, type TestGateway } from '../helpers/gateway.ts';
import { pollUntil } from '../helpers/poll.ts';

// The prometheus plugin through the whole gateway: the Admin API's /metrics (Kong's
// kong/plugins/prometheus/api.lua) is the embedded node's own, with or without a Status API
// listener (KONG_STATUS_LISTEN), and removing or disabling the plugin leaves only the node's
// gauges (spec/03-plugins/26-prometheus/07-optional_fields_spec.lua:120, OPTIONAL below).

const OPTIONAL = 'spec/03-plugins/26-prometheus/07-optional_fields_spec.lua';
const HIGH_COST = ['kong_http_requests_total', 'kong_kong_latency_ms', 'kong_upstream_latency_ms', 'kong_request_latency_ms', 'kong_bandwidth_bytes'];

const config = (upstream: string) => `_format_version: "3.0"
services:
  - name: echo
    url: ${upstream}
    routes:
      - name: echo-route
        paths: [/]
plugins:
  - name: prometheus
    config:
      status_code_metrics: true
      latency_metrics: true
      bandwidth_metrics: true
`;

type AdminCall = (path: string, init?: RequestInit & { json?: unknown }) => Promise<JsonResponse>;
let upstream: EchoUpstream;
let dir: string;

test.before(async () => {
  upstream = await startEchoUpstream();
  dir = mkdtempSync(join(tmpdir(), 'prometheus-gateway-'));
});
test.after.always(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function withGateway(
  name: string,
  node: NonNullable<GatewayOptions['node']>,
  run: (gateway: TestGateway, admin: AdminCall) => Promise<void>,
) {
  const gateway = await startTestGateway({
    configFile: writeConfig(dir, config(upstream.url), `${name}.yml`),
    node,
  });
  try {
    await run(gateway, (path, init = {}) => request(`${gateway.adminUrl}${path}`, init));
  } finally {
    await gateway.dispose();
  }
}

const text = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
};

test('the Admin API serves the node\'s /metrics; KONG_STATUS_LISTEN=off closes the listener only', async (t) => {
  await withGateway('off', { statusListen: null }, async (gateway) => {
    t.is(gateway.statusUrl, undefined);
    t.is((await fetch(`${gateway.proxyUrl}/hello`)).status, 200);
    const line = 'kong_http_requests_total{service="echo",route="echo-route",code="200",source="service",workspace="default",consumer=""} 1\n';
    let metrics = { status: 0, type: null as string | null, body: '' };
    await pollUntil('the Admin API /metrics to count the request', async () => (metrics = await text(`${gateway.adminUrl}/metrics`)).body.includes(line));
    t.is(metrics.status, 200);
    t.is(metrics.type, 'text/plain; charset=UTF-8');
    t.regex(metrics.body, /^kong_node_info\{node_id="[0-9a-f-]{36}",version="3\.9\.3"\} 1$/m);
    // Kong's /status on the Admin API reports the node's nginx counters
    const status = await request(`${gateway.adminUrl}/status`);
    t.true(status.body.server.total_requests >= 1, JSON.stringify(status.body.server));
  });
});

test('with a Status API listener, it and the Admin API serve the same series', async (t) => {
  await withGateway('on', { statusListen: '127.0.0.1:0' }, async (gateway) => {
    t.regex(gateway.statusUrl!, /^http:\/\/127\.0\.0\.1:\d+$/);
    t.is((await fetch(`${gateway.proxyUrl}/one`)).status, 200);
    const line = 'kong_http_requests_total{service="echo",route="echo-route",code="200",source="service",workspace="default",consumer=""} 1\n';
    await pollUntil('the Status API to count the request', async () => (await text(`${gateway.statusUrl!}/metrics`)).body.includes(line));
    const fromAdmin = (await text(`${gateway.adminUrl}/metrics`)).body;
    const fromStatus = (await text(`${gateway.statusUrl!}/metrics`)).body;
    const counters = (body: string) => body.split('\n').filter((l) => l.startsWith('kong_http_requests_total') || l.startsWith('kong_node_info'));
    t.deepEqual(counters(fromAdmin), counters(fromStatus));
    t.is((await text(`${gateway.statusUrl!}/status/ready`)).status, 200);
  });
});

for (const method of ['disabling', 'removing'] as const) {
  test(`less metrics when ${method} prometheus (${OPTIONAL}:120)`, async (t) => {
    await withGateway(method, { statusListen: null }, async (gateway, admin) => {
      t.is((await fetch(`${gateway.proxyUrl}/before`)).status, 200);
      await pollUntil('the high-cost series', async () => (await text(`${gateway.adminUrl}/metrics`)).body.includes('kong_http_requests_total{'));
      const [plugin] = (await admin('/plugins')).body.data as Array<{ id: string }>;
      if (method === 'disabling') t.is((await admin(`/plugins/${plugin!.id}`, { method: 'PATCH', json: { enabled: false } })).status, 200);
      else t.is((await admin(`/plugins/${plugin!.id}`, { method: 'DELETE' })).status, 204);
      // the write answers once the node runs it
      const body = (await text(`${gateway.adminUrl}/metrics`)).body;
      for (const family of HIGH_COST) t.false(body.includes(family), family);
      t.true(body.includes('kong_memory_lua_shared_dict_bytes{'));
      t.regex(body, /^kong_nginx_connections_total\{.*state="accepted"\} \d+$/m);
    });
  });
}

test("prometheus_metrics is 16m unless KONG_NGINX_HTTP_LUA_SHARED_DICT declares it, in Kong's spelling", async (t) => {
  const { node } = readGatewaySettings({ KONG_NGINX_HTTP_LUA_SHARED_DICT: 'animal_store_edge 10m; lua_shared_dict prometheus_metrics 32m' });
  t.deepEqual(node!.sharedDicts, ['animal_store_edge 10m', 'prometheus_metrics 32m']);
  const capacity = (body: string) => /^kong_memory_lua_shared_dict_total_bytes\{[^}]*shared_dict="prometheus_metrics"[^}]*\} (\d+)$/m.exec(body)?.[1];
  await withGateway('declared', { statusListen: null, sharedDicts: node!.sharedDicts }, async (gateway) => {
    t.is(capacity((await text(`${gateway.adminUrl}/metrics`)).body), String(32 * 1024 * 1024));
  });
  await withGateway('default', { statusListen: null }, async (gateway) => {
    t.is(capacity((await text(`${gateway.adminUrl}/metrics`)).body), String(16 * 1024 * 1024));
  });
});
