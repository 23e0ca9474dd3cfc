import { request } from 'node:http';
import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import { pollUntil } from '../helpers/poll.ts';
import { buildSnapshot } from '../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

// The PDK as a plugin sees it, phase by phase (kong/pdk/*.lua, 3.9.3), through the dp-probe
// fixture (test/fixtures/plugins/dp-probe): it reports what the PDK answered in X-Probe-*.

let upstream: Upstream;
let node: TestNode;
const snapshot = buildSnapshot({
  services: [{ name: 'svc', url: 'http://127.0.0.1:1' }],
  routes: [
    { name: 'pdk-route', service: 'svc', paths: ['~/pdk/(?<id>\\d+)/(\\w+)'], strip_path: false },
    { name: 'hf-crash', service: 'svc', paths: ['/hf-crash'] },
    { name: 'changes', service: 'svc', paths: ['/changes'] },
    { name: 'get-body', service: 'svc', paths: ['/get-body'] },
  ],
  plugins: [
    { name: 'dp-probe', route: 'pdk-route', config: { tag: 'pdk', report: 'pdk' } },
    { name: 'dp-probe', route: 'hf-crash', config: { tag: 'hf', error_phase: 'header_filter' } },
    { name: 'dp-probe', route: 'changes', config: { tag: 'changes', set_upstream_header: 'set', set_path: '/new path', clear_query_arg: 'apikey' } },
    { name: 'dp-probe', route: 'get-body', config: { tag: 'body', report: 'body' } },
  ],
});

test.before(async () => {
  upstream = await startUpstream((req, res) => {
    res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
    res.end(JSON.stringify({ url: req.url, headers: req.headers }));
  });
  snapshot.services[0]!.port = upstream.port;
  node = await startTestNode({ plugins: ['dp-probe'], snapshot: { ...snapshot, config_hash: 'a'.repeat(32) } });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

test('kong.request, kong.client, kong.router, kong.node as an access handler sees them', async (t) => {
  const res = await httpGet(node.url('/pdk/42/abc/./x?a=1&a=2&b'), {
    method: 'POST',
    headers: { host: 'shop.test:8000', 'x-multi': ['one', 'two'], 'content-type': 'text/plain' },
    body: 'hello',
  });
  const h = res.headers;
  t.is(h['x-probe-path'], '/pdk/42/abc/x');
  t.is(h['x-probe-raw-path'], '/pdk/42/abc/./x');
  t.is(h['x-probe-raw-query'], 'a=1&a=2&b');
  t.is(h['x-probe-query-a'], '1');
  t.is(h['x-probe-method'], 'POST');
  t.is(h['x-probe-scheme'], 'http');
  t.is(h['x-probe-host'], 'shop.test');
  t.is(h['x-probe-port'], new URL(node.proxyUrl).port);
  t.is(h['x-probe-forwarded-host'], 'shop.test');
  t.is(h['x-probe-forwarded-proto'], 'http');
  t.is(h['x-probe-forwarded-prefix'], '', 'strip_path off: $upstream_x_forwarded_prefix is empty');
  t.is(h['x-probe-client-ip'], '127.0.0.1');
  t.is(h['x-probe-forwarded-ip'], '127.0.0.1');
  t.is(h['x-probe-protocol'], 'http', 'two protocols: the request scheme');
  t.is(h['x-probe-route'], 'pdk-route');
  t.is(h['x-probe-service'], 'svc');
  t.is(h['x-probe-node-id'], node.settings.nodeId);
  t.is(h['x-probe-subsystem'], 'http');
  t.is(h['x-probe-captures'], String.raw`{"id":"42"}{"0":"\/pdk\/42\/abc","1":"42","2":"abc"}`);
  t.is(h['x-probe-header-multi'], 'one');
  t.is(h['x-probe-body'], 'hello');
  t.is(h['x-probe-plugin-id'], snapshot.plugins[0]!.id);
  t.is(h['x-probe-has-conf-ids'], `true/${snapshot.routes[0]!.id}/nil`);
  t.is(h['x-probe-init-worker-ran'], 'true');
  t.is(h['x-probe-configured'], '4', 'configure got every dp-probe configuration');
});

test('kong.response and kong.service.response in header_filter: the upstream\'s status and headers', async (t) => {
  const res = await httpGet(node.url('/pdk/1/x'));
  t.is(res.status, 201);
  t.is(res.headers['x-probe-source'], 'service');
  t.is(res.headers['x-probe-service-status'], '201');
  t.is(res.headers['x-probe-upstream-header'], 'yes');
  t.is(res.headers['x-probe-response-status'], '201');
});

/** kong.request.get_body()'s three answers for this body, and its body with max_args 1. */
async function getBody(contentType: string, body: string) {
  const res = await httpGet(node.url('/get-body'), { method: 'POST', headers: { 'content-type': contentType }, body });
  const h = res.headers;
  const decoded = (value: unknown) => (typeof value === 'string' && value !== 'nil' ? JSON.parse(value) : null);
  return {
    status: res.status,
    body: decoded(h['x-probe-get-body']),
    err: h['x-probe-get-body-err'],
    mime: h['x-probe-get-body-mime'],
    first: decoded(h['x-probe-get-body-max-args-1']),
  };
}

// kong/pdk/request.lua:855-862 (3.9.3): without max_args, ngx.req.get_post_args() is called with
// no argument (ngx_lua checks a nil one as a number); t/01-pdk/04-request/16-get_body.t TEST 16,
// 17 and 20 (max_args)
test('kong.request.get_body: a form body, with and without max_args (kong/pdk/request.lua:855-862)', async (t) => {
  const form = 'application/x-www-form-urlencoded';
  t.deepEqual(await getBody(form, 'Foo=Hello&Bar=World&Accept=a%2Fb&Accept=text%2Fhtml&flag'), {
    status: 201,
    body: { Foo: 'Hello', Bar: 'World', Accept: ['a/b', 'text/html'], flag: true },
    err: 'nil',
    mime: form,
    first: { Foo: 'Hello' },
  });
  t.deepEqual(await getBody(`${form}; charset=UTF-8`, ''), { status: 201, body: {}, err: 'nil', mime: form, first: {} });
});

// docs/known-differences.md: Kong 3.9.3 decodes the parts with lua-multipart, each value by its
// part's name, an array for a repeated name (kong/pdk/request.lua:883-899;
// t/01-pdk/04-request/16-get_body.t TEST 25 answers { test = { "form", "data" } } for this body).
test('kong.request.get_body: multipart/form-data is not decoded (Kong: the parts by name)', async (t) => {
  const part = (value: string) => `--AaB03x\r\nContent-Disposition: form-data; name="test"\r\n\r\n${value}\r\n`;
  t.deepEqual(await getBody('multipart/form-data; boundary=AaB03x', `${part('form')}${part('data')}--AaB03x--\r\n`), {
    status: 201,
    body: null,
    err: 'multipart/form-data bodies cannot be decoded by the local gateway',
    mime: 'multipart/form-data',
    first: null,
  });
});

test('kong.service.request: a header, the path (escaped) and a query argument removed', async (t) => {
  const res = await httpGet(node.url('/changes?c=valu%651&b=value2&api%6B%65%79=kong&a=valu%653'));
  t.is(res.json.headers['x-probe-upstream'], 'set');
  // clear_query_arg re-encodes what it keeps (spec/03-plugins/09-key-auth/02-access_spec.lua)
  t.is(res.json.url, '/new%20path?c=value1&b=value2&a=value3');
});

test('kong.service.request.clear_query_arg: a plain query stays as it is; the rest is re-serialized as URLSearchParams', async (t) => {
  t.is((await httpGet(node.url('/changes?b=2&a=1&c=x.y_z-*'))).json.url, '/new%20path?b=2&a=1&c=x.y_z-*');
  // a second "=" in a value, a pair without one, empty pairs: as resty.ada's search_remove writes them
  t.is((await httpGet(node.url('/changes?a=b=c&x&&y=1&'))).json.url, '/new%20path?a=b%3Dc&x=&y=1');
  t.is((await httpGet(node.url('/changes?apikey=k&b=2'))).json.url, '/new%20path?b=2');
});

test('an error in header_filter aborts the request as nginx does; the log phase still runs', async (t) => {
  const outcome = await new Promise<string>((resolve) => {
    const req = request(node.url('/hf-crash'), (res) => {
      res.resume();
      res.on('end', () => resolve(`status ${res.statusCode}`));
      res.on('error', () => resolve('aborted'));
    });
    req.on('error', () => resolve('aborted'));
    req.end();
  });
  t.is(outcome, 'aborted');
  await pollUntil('the header_filter failure in the log', async () => node.logsMatching(/failed to run header_filter_by_lua.*probe failed in header_filter|probe hf failed in header_filter/).length > 0);
  await pollUntil('the log phase', async () => node.logsMatching(/probe log hf rid=\w+ trace=hf:access,hf:header_filter,hf:log/).length > 0);
});
