// The cluster's balancer (gateway/local/cmd/balancer.ts, as compose's kong-lb) answers malformed
// HTTP itself, before any node sees it. Those answers, and its own when no node answers
// (balancer-nodes.test.ts), are in the API's Error shape, and an HTTP version or transfer coding
// nginx does not know is the client's malformed request (400), never nginx's HTML page nor a 5xx
// (nginx alone: 505, 501). What a node answers passes untouched.
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BALANCER_ERROR_PREFIX, findNginx, startBalancer, type RunningBalancer } from '../../gateway/local/data-plane-entry.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

let dir: string;
let node: Upstream;
let balancer: RunningBalancer;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'balancer-'));
  // a "node" that answers 400 in a shape of its own, to show the balancer leaves it alone
  node = await startUpstream((_req, res) => {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('the node said no');
  });
  balancer = await startBalancer({ dir, host: '127.0.0.1', port: 0, upstreams: [`127.0.0.1:${node.port}`], nginx: findNginx() });
});
test.after.always(async () => {
  await balancer?.stop();
  await node?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The balancer's pages, in the order both balancers list them. */
const PAGES = ['bad_request', 'method_not_allowed', 'request_timeout', 'uri_too_long', 'bad_gateway', 'service_unavailable', 'gateway_timeout'];

const CASES: Array<[string, string, number, string]> = [
  ['an HTTP version nginx does not speak (nginx: 505)', 'GET /v1/pets HTTP/2.0\r\nHost: x\r\n\r\n', 400, 'bad_request'],
  ['an unknown Transfer-Encoding (nginx: 501)', 'POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n', 400, 'bad_request'],
  ['Transfer-Encoding with Content-Length', 'POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n', 400, 'bad_request'],
  ['two Authorization headers', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n', 400, 'bad_request'],
  ['HTTP/1.1 without Host', 'GET /v1/pets HTTP/1.1\r\n\r\n', 400, 'bad_request'],
  ['a header over the buffers (nginx: 494)', `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(9000)}\r\n\r\n`, 400, 'bad_request'],
  ['a URL over the buffers', `GET /v1/pets?q=${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414, 'uri_too_long'],
  ['TRACE', 'TRACE /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n', 405, 'method_not_allowed'],
];

for (const [name, request, status, code] of CASES) {
  test(`${name}: ${status} ${code} in the Error shape, from the balancer`, async (t) => {
    const seen = node.seen.length;
    const response = await rawRequest(balancer.url, request);
    t.is(response.status, status);
    t.is(response.headers['content-type'], 'application/json; charset=utf-8');
    const body = JSON.parse(response.body) as { code: string; message: string; status: number };
    t.is(body.code, code);
    t.is(body.status, status);
    t.true(body.message.length > 0);
    t.is(node.seen.length, seen, 'no node saw it');
  });
}

test("a node's own 400 passes through untouched", async (t) => {
  const response = await rawRequest(balancer.url, 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  t.is(response.status, 400);
  t.is(response.body, 'the node said no');
});

test('a client asking for an error page by its path gets it in the Error shape, not an nginx page', async (t) => {
  const response = await rawRequest(balancer.url, `GET ${BALANCER_ERROR_PREFIX}/uri_too_long HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  t.is(response.status, 414);
  t.is(JSON.parse(response.body).code, 'uri_too_long');
});

test("the error pages' prefix shadows no plausible route: /balancer_error/… reaches the nodes, as compose's kong-lb", async (t) => {
  t.regex(BALANCER_ERROR_PREFIX, /^\/[\w-]*[0-9a-f]{8}$/, 'a segment no team would pick');
  for (const path of ['/balancer_error/x', '/balancer_error/bad_request', '/errors/bad_request']) {
    const response = await rawRequest(balancer.url, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    t.is(response.body, 'the node said no', path);
    t.true(node.seen.some((request) => request.url === path), path);
  }
  // compose's kong-lb renders the same pages under the same prefix
  const conf = readFileSync(join(REPO_ROOT, 'deploy/nginx/kong-lb.conf'), 'utf8');
  const pages = [...conf.matchAll(/^\s*location = (\S+) \{/gm)].map((match) => match[1]);
  t.deepEqual(pages, PAGES.map((code) => `${BALANCER_ERROR_PREFIX}/${code}`));
});

/** The edge plugin's codes and messages by status (handler.lua's CODES): what our gateway answers. */
function edgeCodes(): Map<number, { code: string; message: string }> {
  const lua = readFileSync(join(REPO_ROOT, 'gateway/plugins/animal-store-edge/handler.lua'), 'utf8');
  return new Map([...lua.matchAll(/^\s*\[(\d{3})\] = \{ "(\w+)", "([^"]*)" \},$/gm)].map(([, status, code, message]) => [Number(status), { code: code!, message: message! }]));
}

test("every page of the balancer's, and of compose's kong-lb, is the edge plugin's answer for its status", async (t) => {
  const codes = edgeCodes();
  const conf = readFileSync(join(REPO_ROOT, 'deploy/nginx/kong-lb.conf'), 'utf8');
  const kongLb = new Map([...conf.matchAll(/location = \S+\/(\w+) \{\s*default_type "application\/json; charset=utf-8";\s*return (\d+) '([^']*)';/g)].map(([, page, status, body]) => [page!, { status: Number(status), body: JSON.parse(body!) }]));
  for (const page of PAGES) {
    const response = await rawRequest(balancer.url, `GET ${BALANCER_ERROR_PREFIX}/${page} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    const body = JSON.parse(response.body) as { code: string; message: string; status: number };
    t.is(body.code, page);
    t.is(body.status, response.status, page);
    t.deepEqual({ code: body.code, message: body.message }, codes.get(response.status), page);
    t.deepEqual(kongLb.get(page), { status: response.status, body }, `kong-lb.conf's ${page}`);
  }
});
