import test from 'ava';
import { startTestNode, type TestNode } from '../../helpers/data-plane.ts';
import { httpGet, type HttpResponse } from '../../helpers/http-request.ts';
import type { SnapshotInput } from '../../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, mockUpstream, plugin } from './kit.ts';

// Kong 3.9.3's spec/03-plugins/14-request-termination/02-access_spec.lua, transcribed, on a
// data-plane node (SPEC:<line> below). Not here: the #grpc case (no gRPC proxying).

const SPEC = 'spec/03-plugins/14-request-termination/02-access_spec.lua';

let upstream: Upstream;
let node: TestNode;
let proxyPort: number;

function snapshot(): SnapshotInput {
  const route = (n: number, extra: Record<string, unknown> = {}) => ({
    name: `api${n}`,
    service: n === 7 ? null : 'mock',
    hosts: [`api${n}.request-termination.test`],
    ...extra,
  });
  return {
    services: [{ name: 'mock', url: upstream.url }],
    routes: [
      route(1), route(2), route(3), route(4), route(5), route(6), route(7), route(8),
      route(9, { strip_path: false, paths: ['~/(?<parameter>[^#?/]+)/200'] }),
      route(10),
    ],
    plugins: [
      plugin('request-termination', { route: 'api1' }),
      plugin('request-termination', { route: 'api2' }, { status_code: 404 }),
      plugin('request-termination', { route: 'api3' }, { status_code: 406, message: 'Invalid' }),
      plugin('request-termination', { route: 'api4' }, { body: '<html><body><h1>Service is down for maintenance</h1></body></html>' }),
      plugin('request-termination', { route: 'api5' }, {
        status_code: 451,
        content_type: 'text/html',
        body: '<html><body><h1>Service is down due to content infringement</h1></body></html>',
      }),
      plugin('request-termination', { route: 'api6' }, { status_code: 503, body: '{"code": 1, "message": "Service unavailable"}' }),
      plugin('request-termination', { route: 'api7' }),
      plugin('request-termination', { route: 'api8' }, { status_code: 204 }),
      plugin('request-termination', { route: 'api9' }, { echo: true, status_code: 404 }),
      plugin('request-termination', { route: 'api10' }, { echo: true, trigger: 'gimme-an-echo', status_code: 404 }),
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(mockUpstream);
  node = await startTestNode({ plugins: BUNDLED_PLUGINS, snapshot: snapshot() });
  proxyPort = Number(new URL(node.proxyUrl).port);
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

function get(n: number, path: string, headers: Record<string, string> = {}, body?: string): Promise<HttpResponse> {
  const withBody = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
  return httpGet(node.url(path), { headers: { host: `api${n}.request-termination.test`, ...withBody, ...headers }, body });
}

test(`default status code and message (${SPEC}:189)`, async (t) => {
  const res = await get(1, '/status/200');
  t.is(res.status, 503);
  t.deepEqual(res.json, { message: 'Service unavailable' });
  t.false(upstream.seen.some((r) => r.headers['x-forwarded-host'] === 'api1.request-termination.test'));
});

test(`default status code and message with serviceless route (${SPEC}:202)`, async (t) => {
  const res = await get(7, '/status/200');
  t.is(res.status, 503);
  t.deepEqual(res.json, { message: 'Service unavailable' });
});

test(`status code with default message (${SPEC}:215)`, async (t) => {
  const res = await get(2, '/status/200');
  t.is(res.status, 404);
  t.deepEqual(res.json, { message: 'Not found' });
});

test(`status code with custom message (${SPEC}:228)`, async (t) => {
  const res = await get(3, '/status/200');
  t.is(res.status, 406);
  t.deepEqual(res.json, { message: 'Invalid' });
});

test(`returns 204 without content length header (${SPEC}:241)`, async (t) => {
  const res = await get(8, '/status/204');
  t.is(res.status, 204);
  t.is(res.headers['content-length'], undefined);
  t.is(res.body, '');
});

test(`default status code and body (${SPEC}:257)`, async (t) => {
  const res = await get(4, '/status/200');
  t.is(res.status, 503);
  t.is(res.body, '<html><body><h1>Service is down for maintenance</h1></body></html>');
});

test(`status code with default message: a raw body (${SPEC}:269)`, async (t) => {
  const res = await get(5, '/status/200');
  t.is(res.status, 451);
  t.is(res.body, '<html><body><h1>Service is down due to content infringement</h1></body></html>');
});

// Kong injects nginx_http_charset = UTF-8 (kong/templates/kong_defaults.lua) as `charset UTF-8;`
// at the http level, so nginx's charset filter completes the text/html the plugin sets.
test(`status code with default message: the content_type, with nginx's charset (${SPEC}:269)`, async (t) => {
  const res = await get(5, '/status/200');
  t.is(res.headers['content-type'], 'text/html; charset=UTF-8');
});

test(`status code with custom message: a JSON body as given (${SPEC}:292)`, async (t) => {
  const res = await get(6, '/status/200');
  t.is(res.status, 503);
  t.deepEqual(res.json, { code: 1, message: 'Service unavailable' });
});

test(`returns server tokens with Server header (${SPEC}:306)`, async (t) => {
  const res = await get(1, '/status/200');
  t.is(res.headers.server, 'kong/3.9.3');
});

/** The echoed request, without what depends on the client (Kong's spec drops user-agent). */
function echoed(res: HttpResponse) {
  const request = res.json.request as { headers: Record<string, string> };
  delete request.headers['user-agent'];
  delete request.headers.connection;
  return request;
}

test(`echos a request if no trigger is set (${SPEC}:319)`, async (t) => {
  const res = await get(9, '/status/200?hello=there', {}, 'cool body');
  t.is(res.status, 404);
  t.is(res.json.matched_route.hosts[0], 'api9.request-termination.test');
  t.is(res.json.message, 'Not found');
  t.is(typeof res.json.kong.node_id, 'string');
  t.is(typeof res.json.kong.worker_pid, 'number');
  t.deepEqual(echoed(res), {
    headers: { 'content-length': '9', host: 'api9.request-termination.test' },
    host: 'api9.request-termination.test',
    method: 'GET',
    path: '/status/200',
    port: proxyPort,
    query: { hello: 'there' },
    raw_body: 'cool body',
    scheme: 'http',
    uri_captures: { named: { parameter: 'status' }, unnamed: ['status'] },
  });
});

test(`doesn't echo a request if the trigger is set but not specified (${SPEC}:355)`, async (t) => {
  const res = await get(10, '/status/200');
  t.is(res.status, 200);
  t.is(res.json.headers['x-forwarded-host'], 'api10.request-termination.test', 'proxied');
});

test(`echos a request if the trigger is specified as a header (${SPEC}:365)`, async (t) => {
  const res = await get(10, '/status/200?hello=there', { 'Gimme-An-Echo': 'anything will do' }, 'cool body');
  t.is(res.status, 404);
  t.is(res.json.matched_route.hosts[0], 'api10.request-termination.test');
  t.deepEqual(echoed(res), {
    headers: { 'content-length': '9', 'gimme-an-echo': 'anything will do', host: 'api10.request-termination.test' },
    host: 'api10.request-termination.test',
    method: 'GET',
    path: '/status/200',
    port: proxyPort,
    query: { hello: 'there' },
    raw_body: 'cool body',
    scheme: 'http',
    uri_captures: { named: {}, unnamed: [] },
  });
});

test(`echos a request if the trigger is specified as a query parameter (${SPEC}:403)`, async (t) => {
  const res = await get(10, '/status/200?hello=there&gimme-an-echo=anything%20will%20do', {}, 'cool body');
  t.is(res.status, 404);
  t.is(res.json.matched_route.hosts[0], 'api10.request-termination.test');
  t.deepEqual(echoed(res), {
    headers: { 'content-length': '9', host: 'api10.request-termination.test' },
    host: 'api10.request-termination.test',
    method: 'GET',
    path: '/status/200',
    port: proxyPort,
    query: { hello: 'there', 'gimme-an-echo': 'anything will do' },
    raw_body: 'cool body',
    scheme: 'http',
    uri_captures: { named: {}, unnamed: [] },
  });
});

// kong/pdk/request.lua:855-862 (3.9.3): get_body() without max_args calls ngx.req.get_post_args()
// with no argument (ngx_lua checks a nil one as a number); the echo carries the decoded form.
test('echos a form body decoded, and an empty one as {} (kong/pdk/request.lua:855-862)', async (t) => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const res = await get(9, '/status/200', form, 'a=1&a=2&b');
  t.is(res.status, 404);
  t.deepEqual(res.json.request.body, { a: ['1', '2'], b: true });
  t.is(res.json.request.raw_body, 'a=1&a=2&b');
  const empty = await get(9, '/status/200', form, '');
  t.is(empty.status, 404);
  t.deepEqual(empty.json.request.body, {});
  t.is(empty.json.request.raw_body, '');
});
