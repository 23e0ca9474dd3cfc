import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import { pollUntil } from '../helpers/poll.ts';
import { RawConnection } from '../helpers/raw-http.ts';
import type { SnapshotInput } from '../helpers/snapshot-builder.ts';
import { echoRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';

// The plugins iterator (kong/runloop/plugins_iterator.lua, 3.9.3): PRIORITY order (name order on
// ties, kong/db/dao/plugins.lua), lookup_cfg precedence, no_consumer; and kong/init.lua's
// phases around it: global plugins only in rewrite, delayed exits in access
// (execute_collecting_plugins_iterator), a handler error in access → 500.

let upstream: Upstream;
let node: TestNode;
let globals: TestNode;

const PLUGINS = ['dp-probe', 'dp-probe-auth', 'dp-probe-low'];

function snapshot(): SnapshotInput {
  const services = ['order', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'exit', 'crash', 'hf', 'body'].map((name) => ({ name, url: upstream.url }));
  const route = (name: string) => ({ name, service: name, paths: [`/${name}`] });
  const low = (tag: string, scope: { route?: string; service?: string; consumer?: string }) => ({ name: 'dp-probe-low', ...scope, config: { tag } });
  return {
    services,
    routes: services.map((s) => route(s.name)),
    consumers: [{ username: 'alice' }, { username: 'bob' }],
    plugins: [
      // order: three plugins on one route, each on a different scope
      { name: 'dp-probe', route: 'order', config: { tag: 'p5000' } },
      { name: 'dp-probe-auth', service: 'order', config: { tag: 'p3000' } },
      { name: 'dp-probe-low', route: 'order', config: { tag: 'p1000' } },

      // precedence: dp-probe (5000) authenticates, dp-probe-low (1000) has several instances
      ...['c1', 'c2', 'c3', 'c4'].map((r) => ({ name: 'dp-probe', route: r, config: { tag: 'auth', authenticate: 'alice' } })),
      { name: 'dp-probe', route: 'c6', config: { tag: 'auth', authenticate: 'bob' } },
      low('G', {}),
      low('R', { route: 'c1' }),
      low('S', { service: 'c1' }),
      low('C', { consumer: 'alice' }),
      low('RS', { route: 'c2', service: 'c2' }),
      low('RC', { route: 'c3', consumer: 'alice' }),
      low('SC', { service: 'c3', consumer: 'alice' }),
      low('SC', { service: 'c4', consumer: 'alice' }),
      low('RS', { route: 'c4', service: 'c4' }),
      low('R', { route: 'c5' }),
      low('S', { service: 'c5' }),
      // no_consumer (dp-probe-auth's schema): its consumer instance is never used
      { name: 'dp-probe-auth', consumer: 'alice', config: { tag: 'auth-C' } },
      { name: 'dp-probe-auth', route: 'c1', config: { tag: 'auth-R' } },

      // a delayed exit: later plugins are collected (downstream phases run) but not run in access
      { name: 'dp-probe', route: 'exit', config: { tag: 'first', exit_phase: 'access', exit_status: 403, exit_body: 'nope', exit_headers: { 'X-Why': 'probe' } } },
      { name: 'dp-probe-low', route: 'exit', config: { tag: 'after' } },
      { name: 'dp-probe', route: 'crash', config: { tag: 'crash', error_phase: 'access' } },
      { name: 'dp-probe-low', route: 'crash', config: { tag: 'after' } },
      { name: 'dp-probe', route: 'hf', config: { tag: 'hf', exit_phase: 'header_filter', exit_status: 451, exit_body: 'replaced' } },
      { name: 'dp-probe', route: 'body', config: { tag: 'body', append_body: '!' } },
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(echoRequest);
  [node, globals] = await Promise.all([
    startTestNode({ plugins: PLUGINS, snapshot: snapshot() }),
    startTestNode({
      plugins: PLUGINS,
      snapshot: {
        services: [{ name: 'echo', url: upstream.url }],
        routes: [{ service: 'echo', paths: ['/echo'] }],
        plugins: [
          { name: 'dp-probe', config: { tag: 'global', exit_phase: 'rewrite', exit_status: 429, exit_body: 'slow down' } },
          { name: 'dp-probe-low', config: { tag: 'low' } },
        ],
      },
    }),
  ]);
});

test.after.always(async () => {
  await Promise.all([node?.dispose(), globals?.dispose()]);
  await upstream?.close();
});

const trace = (res: { headers: Record<string, unknown> }) => String(res.headers['x-probe-trace'] ?? '').split(',');

test('plugins run by PRIORITY, whatever the scope of their instance', async (t) => {
  const res = await httpGet(node.url('/order'));
  // G (a global dp-probe-low) runs in rewrite; in access the route's instance replaces it
  t.deepEqual(trace(res), [
    'G:rewrite',
    'p5000:access', 'p3000:access', 'p1000:access',
    'p5000:header_filter', 'p3000:header_filter', 'p1000:header_filter',
  ]);
});

test('lookup_cfg: consumer beats route; route+service beats consumer; route+consumer beats service+consumer', async (t) => {
  const ran = async (path: string) => trace(await httpGet(node.url(path))).filter((step) => step.endsWith(':access'));
  t.deepEqual(await ran('/c1'), ['auth:access', 'auth-R:access', 'C:access'], 'C over R, S, G');
  t.deepEqual(await ran('/c2'), ['auth:access', 'RS:access'], 'RS over C');
  t.deepEqual(await ran('/c3'), ['auth:access', 'RC:access'], 'RC over SC');
  t.deepEqual(await ran('/c4'), ['auth:access', 'SC:access'], 'SC over RS');
  t.deepEqual(await ran('/c5'), ['R:access'], 'no consumer: R over S, G');
  t.deepEqual(await ran('/c6'), ['auth:access', 'G:access'], 'a consumer without instances: the global one');
});

test('a plugin sees the consumer authenticated by the plugins before it', async (t) => {
  const res = await httpGet(node.url('/c1'));
  t.is(res.headers['x-probe-consumer-auth'], 'none');
  t.is(res.headers['x-probe-consumer-c'], 'alice');
});

test('a delayed exit: the rest are collected, not run in access; their header_filter and log still run', async (t) => {
  const res = await httpGet(node.url('/exit'));
  t.is(res.status, 403);
  t.is(res.body, 'nope');
  t.is(res.headers['x-why'], 'probe');
  t.is(res.headers['content-length'], '4');
  t.deepEqual(trace(res), ['G:rewrite', 'first:access', 'first:header_filter', 'after:header_filter']);
  t.truthy(res.headers['x-kong-response-latency']);
  t.is(upstream.seen.filter((r) => r.url.startsWith('/exit')).length, 0);
  const rid = String(res.headers['x-kong-request-id']);
  await pollUntil('the log phase', async () => node.logsMatching(new RegExp(`probe log after rid=${rid} .*source=exit status=403`)).length === 1);
});

test('an exit in access with "Expect: 100-continue" pending: no 100 Continue; later phases still see Expect', async (t) => {
  // nginx's own error responses skip the 100 (ngx_http_special_response_handler); Kong's exits do too
  const connection = await RawConnection.open(node.url('/'));
  t.teardown(() => connection.close());
  await connection.write('POST /exit HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n');
  const res = await connection.response();
  t.deepEqual(res.interim, []);
  t.is(res.status, 403);
  // nginx waits for the body it is to discard, and logs once the client gives up on it
  connection.close();
  const rid = res.headers['x-kong-request-id']!;
  await pollUntil('the log phase', async () => node.logsMatching(new RegExp(`probe log after rid=${rid} .* expect=100-continue`)).length === 1);
});

test('an error in an access handler: 500, logged with the plugin\'s name; the response source is "error"', async (t) => {
  const res = await httpGet(node.url('/crash'), { headers: { accept: 'application/json' } });
  t.is(res.status, 500);
  t.is(res.json.message, 'An unexpected error occurred');
  t.deepEqual(trace(res), ['G:rewrite', 'crash:access', 'crash:header_filter', 'after:header_filter']);
  // the log reaches us through nginx's stderr pipe, which may be read after the response
  await pollUntil('the error line', async () =>
    node.logsMatching(/\[error\].*\[kong\] init\.lua:\d+ \[dp-probe\] .*handler\.lua:\d+: probe crash failed in access on purpose/).length > 0,
  );
  const rid = String(res.headers['x-kong-request-id']);
  await pollUntil('the log phase', async () => node.logsMatching(new RegExp(`rid=${rid} .*source=error status=500`)).length > 0);
});

test('kong.response.exit in header_filter replaces the upstream response', async (t) => {
  const res = await httpGet(node.url('/hf'));
  t.is(res.status, 451);
  t.is(res.body, 'replaced');
  t.is(res.headers['content-length'], '8');
});

test('body_filter: get_raw_body buffers the whole body, set_raw_body replaces it', async (t) => {
  const res = await httpGet(node.url('/body'));
  t.is(res.status, 200);
  t.true(res.body.endsWith('}!'));
  t.is(JSON.parse(res.body.slice(0, -1)).url, '/');
});

test('only global plugins run in rewrite; an exit there skips access and the upstream', async (t) => {
  const res = await httpGet(globals.url('/echo'));
  t.is(res.status, 429);
  t.is(res.body, 'slow down');
  // the global instances' downstream handlers run (get_collected_iterator falls back to them)
  t.deepEqual(trace(res), ['global:rewrite', 'global:header_filter', 'low:header_filter']);
  const none = await httpGet(globals.url('/nowhere'));
  t.is(none.status, 429, 'rewrite runs before the router');
});
