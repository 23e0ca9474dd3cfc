import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import type { SnapshotInput } from '../helpers/snapshot-builder.ts';
import { echoRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { PATH_HANDLING_V0 } from './path-handling-cases.ts';

// Kong 3.9.3's traditional_compatible router: kong/router/atc.lua, kong/router/transform.lua
// (get_expression, get_priority, split_routes_and_services_by_path) and atc-router 1.6.2
// (src/router.rs: matchers tried by (priority, uuid) descending).

let upstream: Upstream;
let node: TestNode;

const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function routes(): SnapshotInput {
  const input: Required<Pick<SnapshotInput, 'services' | 'routes' | 'plugins'>> = {
    services: [
      { name: 'echo', url: upstream.url },
      { name: 'disabled', url: upstream.url, enabled: false },
    ],
    routes: [
      { name: 'prefix-short', service: 'echo', paths: ['/prio'] },
      { name: 'prefix-long', service: 'echo', paths: ['/prio/long'] },
      // a regex route outranks a prefix route that also has a method: the regex bit (51) of
      // get_priority is above the match weight, which transform.lua shifts as a 32-bit number
      { name: 'regex-items', service: 'echo', paths: ['~/items/(?<id>\\d+)$'] },
      { name: 'method-items', service: 'echo', methods: ['GET'], paths: ['/items'] },
      { name: 'regex-low', service: 'echo', paths: ['~/rp/.+'], regex_priority: 1 },
      { name: 'regex-high', service: 'echo', paths: ['~/rp/[a-z]+'], regex_priority: 5 },
      { name: 'host-exact', service: 'echo', hosts: ['api.example.com'], paths: ['/hosts'] },
      { name: 'host-wild-suffix', service: 'echo', hosts: ['*.example.com'], paths: ['/hosts'] },
      { name: 'host-wild-prefix', service: 'echo', hosts: ['api.*'], paths: ['/hosts'] },
      { name: 'host-port', service: 'echo', hosts: ['ported.test:1'], paths: ['/hosts'] },
      { name: 'methods', service: 'echo', methods: ['POST', 'PUT'], paths: ['/methods'] },
      { name: 'header-one', service: 'echo', headers: { 'x-version': ['v1'] }, paths: ['/hdr/long/path'] },
      { name: 'header-two', service: 'echo', headers: { 'x-version': ['v1'], 'x-region': ['eu', 'us'] }, paths: ['/hdr'] },
      { name: 'header-regex', service: 'echo', headers: { 'x-tenant': ['~*^acme-\\d+$'] }, paths: ['/hdr-re'] },
      { name: 'off', service: 'disabled', paths: ['/disabled'] },
      { name: 'https-only', service: 'echo', protocols: ['https'], paths: ['/secure'] },
      { name: 'https-redirect', service: 'echo', protocols: ['https'], https_redirect_status_code: 308, paths: ['/redirect'] },
      { name: 'preserve', service: 'echo', preserve_host: true, paths: ['/preserve'] },
      { name: 'tie-a', id: ID(1), service: 'echo', paths: ['/tie'] },
      { name: 'tie-b', id: ID(2), service: 'echo', paths: ['/tie'] },
      { name: 'normalized', service: 'echo', paths: ['/norm/~x'] },
      { name: 'no-service', service: null, paths: ['/no-service'] },
    ],
    // a probe on some routes says which one served (X-Probe-Trace "<tag>:access,...")
    plugins: ['regex-low', 'regex-high', 'tie-a', 'tie-b', 'no-service'].map((route) => ({ name: 'dp-probe', route, config: { tag: route } })),
  };
  // the path-handling table: one service and route per row, told apart by Host
  PATH_HANDLING_V0.forEach(([servicePath, routePath, stripPath], i) => {
    input.services.push({ name: `ph-${i}`, url: upstream.url, path: servicePath });
    input.routes.push({ name: `ph-${i}`, service: `ph-${i}`, hosts: [`ph-${i}.test`], paths: routePath ? [routePath] : null, strip_path: stripPath });
  });
  return input;
}

test.before(async () => {
  upstream = await startUpstream(echoRequest);
  node = await startTestNode({ snapshot: routes(), plugins: ['dp-probe'] });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

/** The route that served a request, from the path the upstream saw or the 404. */
async function served(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await httpGet(node.url(path), { method, headers });
  return res;
}

test('the longest prefix wins among prefix routes', async (t) => {
  t.is((await served('/prio/long/x')).json.url, '/x');
  t.is((await served('/prio/other')).json.url, '/other');
});

test('a regex route outranks a prefix route with a method (transform.lua get_priority)', async (t) => {
  const res = await served('/items/42');
  t.is(res.status, 200);
  // regex-items strips the whole match; method-items would have left "/42"
  t.is(res.json.url, '/');
  t.is((await served('/items/abc')).json.url, '/abc');
});

/** The tag of the probe on the route that served the request. */
async function servedBy(path: string): Promise<string | undefined> {
  const res = await served(path);
  return (res.headers['x-probe-trace'] as string | undefined)?.split(':')[0];
}

test('regex_priority orders regex routes', async (t) => {
  t.is(await servedBy('/rp/abc'), 'regex-high');
  t.is(await servedBy('/rp/123'), 'regex-low');
});

test('hosts: exact, wildcards, and host:port compares the local port too', async (t) => {
  t.is((await served('/hosts', { host: 'api.example.com' })).status, 200);
  t.is((await served('/hosts', { host: 'www.example.com' })).status, 200);
  t.is((await served('/hosts', { host: 'api.example.org' })).status, 200);
  t.is((await served('/hosts', { host: 'example.com' })).status, 404);
  t.is((await served('/hosts', { host: 'ported.test' })).status, 404, 'the route wants local port 1');
  // the Host header's own port stands for the local port (kong/router/fields.lua net.dst.port)
  t.is((await served('/hosts', { host: 'ported.test:1' })).status, 200);
});

test('hosts are compared as the Host header sends them (atc.lua does not lower-case)', async (t) => {
  t.is((await served('/hosts', { host: 'API.EXAMPLE.COM' })).status, 404);
});

test('methods', async (t) => {
  t.is((await served('/methods', {}, 'POST')).status, 200);
  t.is((await served('/methods', {}, 'GET')).status, 404);
});

test('headers: any value, case-insensitive; more headers outrank a longer path; ~* regexes', async (t) => {
  t.is((await served('/hdr/long/path', { 'x-version': 'V1', 'x-region': 'us' })).json.url, '/long/path', 'header-two wins');
  t.is((await served('/hdr/long/path', { 'x-version': 'v1' })).json.url, '/', 'header-one');
  t.is((await served('/hdr', { 'x-version': 'v2' })).status, 404);
  t.is((await served('/hdr-re', { 'x-tenant': 'ACME-12' })).status, 200);
  t.is((await served('/hdr-re', { 'x-tenant': 'acme-x' })).status, 404);
});

test("a disabled service's routes are left out", async (t) => {
  const res = await served('/disabled');
  t.is(res.status, 404);
  t.is(res.json.message, 'no Route matched with those values');
});

test('no route: 404 in the template the Accept header asks for', async (t) => {
  const json = await served('/nowhere');
  t.is(json.status, 404);
  t.is(json.headers['content-type'], 'application/json; charset=utf-8');
  t.deepEqual(Object.keys(json.json), ['message', 'request_id']);
  t.is(json.json.request_id, json.headers['x-kong-request-id']);
  const html = await served('/nowhere', { accept: 'text/html' });
  t.is(html.headers['content-type'], 'text/html; charset=utf-8');
  t.regex(html.body, /<p>no Route matched with those values\.<\/p>/);
});

test('an https-only route answers 426 over http, or redirects with its status code', async (t) => {
  const res = await served('/secure');
  t.is(res.status, 426);
  t.is(res.json.message, 'Please use HTTPS protocol');
  t.is(res.headers.upgrade, 'TLS/1.2, HTTP/1.1');
  const redirect = await served('/redirect/x?y=1', { host: 'shop.test' });
  t.is(redirect.status, 308);
  t.is(redirect.headers.location, 'https://shop.test/redirect/x?y=1');
});

test('preserve_host sends the Host header as received; otherwise the service host:port', async (t) => {
  t.is((await served('/preserve', { host: 'client.test:8080' })).json.headers.host, 'client.test:8080');
  t.is((await served('/prio', { host: 'client.test' })).json.headers.host, `127.0.0.1:${upstream.port}`);
});

test('equal priorities: the greater route id wins (atc-router iterates (priority, uuid) descending)', async (t) => {
  t.is(await servedBy('/tie'), 'tie-b');
});

test('the path is normalized before matching and sent normalized', async (t) => {
  t.is((await served('/norm/%7Ex/a/../b')).json.url, '/b');
  t.is((await served('/prio//long///x')).json.url, '/x');
});

test('path handling v0: the upstream path for each service path, route path and strip_path', async (t) => {
  const failures: string[] = [];
  await Promise.all(
    PATH_HANDLING_V0.map(async ([servicePath, routePath, strip, requestPath, expected], i) => {
      const res = await httpGet(node.url(requestPath), { headers: { host: `ph-${i}.test` } });
      if (res.json?.url !== expected) {
        failures.push(`${servicePath} ${routePath} strip=${strip} ${requestPath}: got ${res.status} ${res.json?.url}, expected ${expected}`);
      }
    }),
  );
  t.deepEqual(failures, []);
});

test('a route without a service: its plugins run, then 503 "no Service found with those values"', async (t) => {
  const res = await served('/no-service', { accept: 'application/json' });
  t.is(res.status, 503);
  t.is(res.json.message, 'no Service found with those values');
  t.is(res.headers['x-probe-trace'], 'no-service:access,no-service:header_filter');
});
