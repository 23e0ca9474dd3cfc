import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import { pollUntil } from '../helpers/poll.ts';
import { RawConnection } from '../helpers/raw-http.ts';
import { buildSnapshot, type Snapshot } from '../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { plugin } from './plugins/kit.ts';

// The headers Kong sets around a proxied request: kong/runloop/handler.lua access.before/after
// and header_filter.after (3.9.3), the proxy_set_header lines of kong/templates/nginx_kong.lua.

let upstream: Upstream;
let plain: TestNode;
let trusting: TestNode;
let quiet: TestNode;
let viaOnly: TestNode;
let snapshot: Snapshot;

test.before(async () => {
  upstream = await startUpstream((req, res) => {
    if (req.url.startsWith('/with-server')) {
      res.writeHead(200, { server: 'upstream/1.0', via: '1.1 cache', 'content-type': 'application/json' });
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
    }
    res.end(JSON.stringify({ url: req.url, headers: req.headers, raw: req.rawHeaders }));
  });
  snapshot = buildSnapshot({
    services: [{ name: 'echo', url: upstream.url }],
    routes: [
      { name: 'api', service: 'echo', paths: ['/api'] },
      { name: 'keep', service: 'echo', paths: ['/keep'], strip_path: false },
    ],
  });
  // answers Kong makes itself: a plugin's exit (401, 429, request-termination's 503)
  const exits = buildSnapshot({
    services: [{ name: 'echo', url: upstream.url }],
    routes: [
      { name: 'api', service: 'echo', paths: ['/api'] },
      { name: 'auth', service: 'echo', paths: ['/auth'] },
      { name: 'limited', service: 'echo', paths: ['/limited'] },
      { name: 'closed', service: 'echo', paths: ['/closed'] },
    ],
    plugins: [plugin('key-auth', { route: 'auth' }), plugin('rate-limiting', { route: 'limited' }, { hour: 1 }), plugin('request-termination', { route: 'closed' })],
  });
  const plugins = ['key-auth', 'rate-limiting', 'request-termination'];
  [plain, trusting, quiet, viaOnly] = await Promise.all([
    startTestNode({ snapshot }),
    startTestNode({ snapshot, trustedIps: ['127.0.0.1', '::1'] }),
    startTestNode({ snapshot: exits, plugins, headers: ['off'] }),
    startTestNode({ snapshot: exits, plugins, headers: ['Via'] }),
  ]);
});

test.after.always(async () => {
  await Promise.all([plain?.dispose(), trusting?.dispose(), quiet?.dispose(), viaOnly?.dispose()]);
  await upstream?.close();
});

test('X-Forwarded-* and X-Real-IP from an untrusted client are replaced; X-Forwarded-For is appended', async (t) => {
  const res = await httpGet(plain.url('/api/items?q=1'), {
    headers: {
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'evil.test',
      'x-forwarded-port': '9999',
      'x-forwarded-path': '/evil',
      'x-forwarded-prefix': '/evil',
      'x-real-ip': '198.51.100.1',
      host: 'shop.test',
    },
  });
  const h = res.json.headers;
  t.is(h['x-forwarded-for'], '203.0.113.7, 127.0.0.1');
  t.is(h['x-forwarded-proto'], 'http');
  t.is(h['x-forwarded-host'], 'shop.test');
  t.is(h['x-forwarded-port'], new URL(plain.proxyUrl).port);
  t.is(h['x-forwarded-path'], '/api/items');
  t.is(h['x-forwarded-prefix'], '/api');
  t.is(h['x-real-ip'], '127.0.0.1');
  t.is(res.json.url, '/items?q=1');
});

test('without strip_path there is no X-Forwarded-Prefix; without X-Forwarded-For it is the client address', async (t) => {
  const res = await httpGet(plain.url('/keep/x'));
  t.is(res.json.url, '/keep/x');
  t.is(res.json.headers['x-forwarded-prefix'], undefined);
  t.is(res.json.headers['x-forwarded-for'], '127.0.0.1');
});

test('from a trusted address (trusted_ips) the client X-Forwarded-* and X-Real-IP are kept', async (t) => {
  const res = await httpGet(trusting.url('/api/items'), {
    headers: {
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'shop.example',
      'x-forwarded-port': '443',
      'x-forwarded-path': '/shop/api/items',
      'x-forwarded-prefix': '/shop',
      'x-real-ip': '198.51.100.1',
    },
  });
  const h = res.json.headers;
  t.is(h['x-forwarded-for'], '203.0.113.7, 127.0.0.1');
  t.is(h['x-forwarded-proto'], 'https');
  t.is(h['x-forwarded-host'], 'shop.example');
  t.is(h['x-forwarded-port'], '443');
  t.is(h['x-forwarded-path'], '/shop/api/items');
  t.is(h['x-forwarded-prefix'], '/shop');
  // real_ip_header X-Real-IP from a set_real_ip_from address: $remote_addr becomes it
  t.is(h['x-real-ip'], '198.51.100.1');
});

test('Via: the client value with "1.1 kong/3.9.3" appended upstream; the upstream value with it downstream', async (t) => {
  const res = await httpGet(plain.url('/api/with-server'), { headers: { via: '1.0 corp-proxy' } });
  t.is(res.json.headers.via, '1.0 corp-proxy, 1.1 kong/3.9.3');
  t.is(res.headers.via, '1.1 cache, 1.1 kong/3.9.3');
  t.is(res.headers.server, 'upstream/1.0', 'proxy_pass_header Server');
});

test('Server, latency headers and the request id (headers = server_tokens, latency_tokens, X-Kong-Request-Id)', async (t) => {
  const res = await httpGet(plain.url('/api'));
  t.is(res.headers.server, 'kong/3.9.3');
  t.regex(String(res.headers['x-kong-upstream-latency']), /^\d+$/);
  t.regex(String(res.headers['x-kong-proxy-latency']), /^\d+$/);
  t.is(res.headers['x-kong-response-latency'], undefined);
  t.regex(String(res.headers['x-kong-request-id']), /^[0-9a-f]{32}$/);
  t.is(res.json.headers['x-kong-request-id'], res.headers['x-kong-request-id']);
  const local = await httpGet(plain.url('/none'));
  t.regex(String(local.headers['x-kong-response-latency']), /^\d+$/);
  t.is(local.headers['x-kong-upstream-latency'], undefined);
  t.is(local.headers.server, 'kong/3.9.3');
});

test('headers = off: no Kong headers; proxied without an upstream Server, nginx names itself as OpenResty does', async (t) => {
  const res = await httpGet(quiet.url('/api'));
  t.is(res.headers.via, undefined);
  t.is(res.headers['x-kong-request-id'], undefined);
  t.is(res.headers['x-kong-proxy-latency'], undefined);
  t.is(res.headers.server, 'openresty');
  const local = await httpGet(quiet.url('/none'));
  t.is(local.headers['x-kong-response-latency'], undefined);
  t.is(local.headers.server, undefined, 'Kong clears it on what it answers itself (next test)');
  // headers_upstream keeps X-Kong-Request-Id for the upstream
  t.regex(res.json.headers['x-kong-request-id'], /^[0-9a-f]{32}$/);
});

// kong/runloop/handler.lua:1587-1593 (3.9.3): on an answer Kong makes itself, without
// server_tokens in headers Kong sets Server to nil, and ngx_lua's cleared header keeps nginx from
// adding its own: spec/02-integration/05-proxy/14-server_tokens_spec.lua:164 (headers = Via) and
// :278 (headers = off) assert no Server on the 404 of no route; plugin exits take the same branch.
test('headers = off or Via: no Server on Kong\'s own answers, no route or a plugin\'s exit (kong/runloop/handler.lua:1587-1593)', async (t) => {
  for (const [name, node] of [['off', quiet], ['Via', viaOnly]] as const) {
    const answers = [await httpGet(node.url('/none')), await httpGet(node.url('/auth')), await httpGet(node.url('/closed'))];
    let limited = await httpGet(node.url('/limited'));
    for (let i = 0; i < 3 && limited.status !== 429; i++) limited = await httpGet(node.url('/limited'));
    answers.push(limited);
    const seen = answers.map((res) => ({ status: res.status, server: res.headers.server, via: res.headers.via }));
    t.deepEqual(seen, [404, 401, 503, 429].map((status) => ({ status, server: undefined, via: undefined })), `headers = ${name}`);
  }
});

test('hop-by-hop request headers named in Connection are not forwarded; TE only as trailers', async (t) => {
  const res = await httpGet(plain.url('/api'), { headers: { connection: 'keep-alive, x-secret', 'x-secret': 'no', te: 'trailers, deflate', 'proxy-connection': 'x' } });
  const h = res.json.headers;
  t.is(h['x-secret'], undefined);
  t.is(h.te, 'trailers');
  t.is(h['proxy-connection'], undefined);
  t.is(h.connection, 'keep-alive');
});

test('the Host sent upstream is the service host:port', async (t) => {
  const res = await httpGet(plain.url('/api'), { headers: { host: 'client.test' } });
  t.is(res.json.headers.host, `127.0.0.1:${upstream.port}`);
});

test('Via for an HTTP/1.0 client: "1 kong/3.9.3", as Kong concatenates http_version() (1.0) in LuaJIT', async (t) => {
  // an HTTP/1.0 response without Content-Length ends with the connection
  const connection = await RawConnection.open(plain.proxyUrl);
  const received: Buffer[] = [];
  connection.socket.on('data', (chunk: Buffer) => received.push(chunk));
  await connection.write('GET /api HTTP/1.0\r\nHost: x\r\n\r\n');
  await connection.waitClosed();
  const text = Buffer.concat(received).toString('utf8');
  t.regex(text, /^HTTP\/1\.1 200 /);
  t.is(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).headers.via, '1 kong/3.9.3');
});

test('WebSocket: Upgrade and Connection go upstream as Kong sets them, then bytes flow both ways', async (t) => {
  const server = createServer((_req, res) => res.end('plain'));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `X-Seen-Connection: ${req.headers.connection}\r\nX-Seen-Upgrade: ${req.headers.upgrade}\r\n\r\n`,
    );
    socket.on('data', (data: Buffer) => socket.write(Buffer.concat([Buffer.from('echo:'), data])));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const ws = await startTestNode({
    snapshot: { services: [{ name: 'ws', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }], routes: [{ service: 'ws', paths: ['/ws'] }] },
  });
  const connection = await RawConnection.open(ws.proxyUrl);
  try {
    const received: Buffer[] = [];
    connection.socket.on('data', (chunk: Buffer) => received.push(chunk));
    await connection.write('GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n');
    await pollUntil('the 101', async () => Buffer.concat(received).includes('\r\n\r\n'));
    const head = Buffer.concat(received).toString();
    t.regex(head, /^HTTP\/1\.1 101 /);
    t.regex(head, /X-Seen-Connection: keep-alive, Upgrade\r\n/);
    t.regex(head, /X-Seen-Upgrade: websocket\r\n/);
    await connection.write('hello');
    await pollUntil('the echo', async () => Buffer.concat(received).toString().endsWith('echo:hello'));
    t.pass();
  } finally {
    connection.close();
    await ws.dispose();
    server.close();
  }
});
