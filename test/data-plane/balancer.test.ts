import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import { echoRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';

// Kong.balancer (kong/init.lua 3.9.3): the service's address, retries (set_more_tries) and
// timeouts (set_timeouts); nginx's 502/504 go through error_page to Kong.handle_error
// (kong/error_handlers.lua); name resolution in access (kong/runloop/balancer/init.lua execute).

let echo: Upstream;
let slow: Upstream;
let dropper: { server: Server; port: number; connections: number; close(): Promise<void> };
let refusedPort: number;
let node: TestNode;

/** Accepts connections and closes them at once: an upstream error nginx retries. */
async function startDropper() {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.once('data', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test.before(async () => {
  echo = await startUpstream(echoRequest);
  slow = await startUpstream((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('late');
    }, 600);
  });
  dropper = await startDropper();
  refusedPort = await closedPort();
  node = await startTestNode({
    snapshot: {
      services: [
        { name: 'refused', url: `http://127.0.0.1:${refusedPort}`, retries: 0 },
        { name: 'slow', url: slow.url, read_timeout: 200, retries: 0 },
        { name: 'dropper', url: `http://127.0.0.1:${dropper.port}`, retries: 2 },
        { name: 'by-name', url: `http://localhost:${echo.port}` },
        { name: 'unresolvable', url: 'http://no-such-host.invalid:80', retries: 0 },
      ],
      routes: [
        { service: 'refused', paths: ['/refused'] },
        { service: 'slow', paths: ['/slow'] },
        { service: 'dropper', paths: ['/dropper'] },
        { service: 'by-name', paths: ['/by-name'] },
        { service: 'unresolvable', paths: ['/unresolvable'] },
      ],
    },
  });
});

test.after.always(async () => {
  await node?.dispose();
  await Promise.all([echo?.close(), slow?.close(), dropper?.close()]);
});

test('connection refused: 502 with Kong\'s message, in the format Accept asks for', async (t) => {
  const res = await httpGet(node.url('/refused'), { headers: { accept: 'application/json' } });
  t.is(res.status, 502);
  t.is(res.json.message, 'An invalid response was received from the upstream server');
  t.is(res.json.request_id, res.headers['x-kong-request-id']);
  const plain = await httpGet(node.url('/refused'));
  t.is(plain.headers['content-type'], 'text/plain; charset=utf-8', 'error_default_type = text/plain');
  t.regex(plain.body, /^An invalid response was received from the upstream server\nrequest_id: [0-9a-f]{32}\n$/);
});

test('read_timeout: 504 "The upstream server is timing out"', async (t) => {
  const res = await httpGet(node.url('/slow'), { headers: { accept: 'application/json' } });
  t.is(res.status, 504);
  t.is(res.json.message, 'The upstream server is timing out');
});

test.serial('retries: a failed try is retried up to the service\'s retries (GET)', async (t) => {
  const before = dropper.connections;
  const res = await httpGet(node.url('/dropper'));
  t.is(res.status, 502);
  t.is(dropper.connections - before, 3, 'retries = 2: three tries');
});

test.serial('a POST already sent is not retried (nginx proxy_next_upstream, non_idempotent off)', async (t) => {
  const before = dropper.connections;
  const res = await httpGet(node.url('/dropper'), { method: 'POST', body: 'x' });
  t.is(res.status, 502);
  t.is(dropper.connections - before, 1);
});

test('a service host name is resolved (/etc/hosts first)', async (t) => {
  const res = await httpGet(node.url('/by-name/x'));
  t.is(res.status, 200);
  t.is(res.json.headers.host, `localhost:${echo.port}`);
});

test('a name that does not resolve: 503 "name resolution failed" or 500 with the resolver\'s reason', async (t) => {
  const res = await httpGet(node.url('/unresolvable'), { headers: { accept: 'application/json' }, timeoutMs: 20_000 });
  if (res.status === 503) t.is(res.json.message, 'name resolution failed');
  else {
    t.is(res.status, 500);
    t.regex(res.json.message, /^failed the initial dns\/balancer resolve for 'no-such-host.invalid' with: dns (client|server) error/);
  }
});

test('an https service: TLS to the upstream with SNI from the upstream Host (proxy_ssl_server_name)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  const server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ sni: (req.socket as TLSSocket).servername, host: req.headers.host, url: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const tls = await startTestNode({ snapshot: { services: [{ name: 'tls', url: `https://localhost:${port}/base` }], routes: [{ service: 'tls', paths: ['/tls'] }] } });
  try {
    const res = await httpGet(tls.url('/tls/x'));
    t.is(res.status, 200);
    t.deepEqual(res.json, { sni: 'localhost', host: `localhost:${port}`, url: '/base/x' });
  } finally {
    await tls.dispose();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
