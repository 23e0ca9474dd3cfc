import { request as httpRequest } from 'node:http';
import test from 'ava';
import { startFixture, type Fixture } from '../helpers/fixture.ts';

// Router: Kong 3.9.3 traditional_compatible (kong/router/transform.lua get_priority,
// kong/router/utils.lua get_upstream_uri_v0). Proxy headers: kong/runloop/handler.lua and the
// nginx template (proxy_set_header ...). Errors: kong/tools/http.lua error templates.
let f: Fixture;

test.before(async () => {
  f = await startFixture(`
_format_version: "3.0"
services:
  - name: root
    url: \${UPSTREAM}
    routes:
      - { name: short, paths: [/a], strip_path: true }
      - { name: long, paths: [/a/b], strip_path: true }
      - { name: regex, paths: ["~/a/b/(?<id>\\\\d+)$"], strip_path: false }
      - { name: method, paths: [/m], methods: [POST], strip_path: false }
      - { name: method-any, paths: [/m], strip_path: false }
      - { name: keep, paths: [/keep], strip_path: false }
      - { name: preserve, paths: [/preserve], strip_path: false, preserve_host: true }
      - { name: host, paths: [/h], hosts: [api.example.com], strip_path: false }
      - { name: version-2, paths: [/v], headers: { x-version: ["~*^v2"] }, strip_path: false }
      - { name: version-any, paths: [/v], strip_path: false, preserve_host: true }
      - { name: https-only, paths: [/secure], protocols: [https] }
      - { name: any-host, paths: [/z], hosts: [], methods: [], strip_path: false }
      - { name: any-host-deeper, paths: [/z/deeper], strip_path: true }
  - name: based
    url: \${UPSTREAM}/base
    routes:
      - { name: based, paths: [/b/], strip_path: true }
`);
});
test.after.always(async () => {
  await f?.dispose();
});

test.serial('the longer prefix wins, and a regex path beats prefixes', async (t) => {
  await f.call('/a/x');
  t.is(f.upstream.last()!.headers['x-forwarded-prefix'], '/a');
  await f.call('/a/b/x');
  t.is(f.upstream.last()!.headers['x-forwarded-prefix'], '/a/b');
  await f.call('/a/b/42');
  t.is(f.upstream.last()!.url, '/a/b/42', 'the regex route (strip_path false) matched');
});

test.serial('an empty list in the file is no list, as decK sends it: hosts [] is no host and gets no host priority', async (t) => {
  // go-kong omits empty lists (`json:"hosts,omitempty"`), so Kong stores null; a hosts list,
  // even an empty one, would outrank any path length (kong/router/transform.lua:609, 3.9.3)
  const route = await f.admin('/routes/any-host');
  t.is(route.body.hosts, null);
  t.is(route.body.methods, null);
  await f.call('/z/deeper/x');
  t.is(f.upstream.last()!.url, '/x', 'the longer path, which strips its prefix, matched');
  await f.call('/z/other');
  t.is(f.upstream.last()!.url, '/z/other');
});

test.serial('a route with methods outranks one without', async (t) => {
  await f.call('/m', { method: 'POST', body: 'x' });
  t.is(f.upstream.last()!.body, 'x');
  t.is((await f.call('/m')).status, 200);
});

test.serial('strip_path joins what is left with the service path', async (t) => {
  await f.call('/b/pets?limit=2');
  t.is(f.upstream.last()!.url, '/base/pets?limit=2');
  await f.call('/b/');
  t.is(f.upstream.last()!.url, '/base/');
  await f.call('/keep/x');
  t.is(f.upstream.last()!.url, '/keep/x');
  t.is(f.upstream.last()!.headers['x-forwarded-prefix'], undefined);
});

test.serial('no matching route: 404 "no Route matched with those values", JSON by default', async (t) => {
  const response = await f.call('/nothing-here');
  t.is(response.status, 404);
  t.is(response.body.message, 'no Route matched with those values');
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(response.body.request_id, response.headers.get('x-kong-request-id'));
  t.is(response.headers.get('server'), 'kong/3.9.3');
  t.regex(response.headers.get('x-kong-response-latency')!, /^\d+$/);
});

test.serial('error bodies follow the Accept header', async (t) => {
  const html = await f.call('/nothing-here', { headers: { accept: 'text/html' } });
  t.is(html.headers.get('content-type'), 'text/html; charset=utf-8');
  t.regex(html.body, /<p>no Route matched with those values\.<\/p>/);
  const plain = await f.call('/nothing-here', { headers: { accept: 'text/plain;q=0.9, application/xml;q=0.5' } });
  t.is(plain.headers.get('content-type'), 'text/plain; charset=utf-8');
});

/** fetch cannot set Host: node:http can. */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
}

test.serial('preserve_host sends the client Host upstream; otherwise the service host', async (t) => {
  await f.call('/preserve');
  t.is(f.upstream.last()!.headers.host, new URL(f.gateway.proxyUrl).host);
  await f.call('/keep');
  t.is(f.upstream.last()!.headers.host, new URL(f.upstream.url).host);
});

// Kong compares hosts as written: the route's `http.host == r#"api.example.com"#` expression
// (kong/router/transform.lua) against the Host header without its port (kong/router/atc.lua
// split_host_port), case-sensitively, as Kong documents (Kong/kong#7478).
test.serial('hosts restrict a route, case-sensitively, whatever the port', async (t) => {
  t.is((await f.call('/h')).status, 404);
  t.is(await statusWithHost(`${f.gateway.proxyUrl}/h`, 'api.example.com'), 200);
  t.is(await statusWithHost(`${f.gateway.proxyUrl}/h`, 'api.example.com:8000'), 200);
  t.is(await statusWithHost(`${f.gateway.proxyUrl}/h`, 'API.example.com'), 404);
});

test.serial('a route for https only answers 426 over http', async (t) => {
  const response = await f.call('/secure');
  t.is(response.status, 426);
  t.is(response.body.message, 'Please use HTTPS protocol');
});

test.serial('the upstream gets the X-Forwarded-* set, X-Real-IP, Via and the request id; the client gets Via and latencies', async (t) => {
  const response = await f.call('/keep/y?q=1', { headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-host': 'spoofed.example' } });
  const seen = f.upstream.last()!.headers;
  t.is(seen['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
  t.is(seen['x-forwarded-host'], '127.0.0.1', 'untrusted client values are replaced (trusted_ips is empty)');
  t.is(seen['x-forwarded-proto'], 'http');
  t.is(seen['x-forwarded-port'], new URL(f.gateway.proxyUrl).port);
  t.is(seen['x-forwarded-path'], '/keep/y');
  t.is(seen['x-real-ip'], '127.0.0.1');
  t.is(seen.via, '1.1 kong/3.9.3');
  t.is(seen.host, new URL(f.upstream.url).host);
  t.is(seen['x-kong-request-id'], response.headers.get('x-kong-request-id') ?? undefined);
  t.is(response.headers.get('via'), '1.1 kong/3.9.3');
  t.regex(response.headers.get('x-kong-upstream-latency')!, /^\d+$/);
  t.regex(response.headers.get('x-kong-proxy-latency')!, /^\d+$/);
});

// kong/router/transform.lua: a header value written "~*…" is a case-insensitive regex; a route
// with headers outranks one without (get_priority's header count).
test.serial('a header value written as a regex (~*) matches case-insensitively', async (t) => {
  await f.call('/v', { headers: { 'x-version': 'V2-beta' } });
  t.not(f.upstream.last()!.headers.host, new URL(f.gateway.proxyUrl).host, 'the regex route (no preserve_host) matched');
  await f.call('/v', { headers: { 'x-version': 'v1' } });
  t.is(f.upstream.last()!.headers.host, new URL(f.gateway.proxyUrl).host, 'the route without headers matched');
});
