import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import { makeCertificate } from '../helpers/tls-certificates.ts';

// Kong pools upstream connections by `ip|port`, and by `ip|port|sni[|client certificate id]`
// when the service is https (kong/init.lua:1378-1399 at 3.9.3): a connection made with one SNI
// never serves a request that sends another (25-upstream_keepalive_spec.lua:107-165 "pools by
// host|port|sni when upstream is https"). ngx_lua 0.10.23 cannot name a pool (no
// balancer.enable_keepalive): nginx's keepalive cache is per address, so an https request keeps
// alive only with the first SNI the worker sent to the address (docs/known-differences.md).

const sockets = new Set<Socket>();
const connections = { tls: 0, plain: 0 };
let tls: Server;
let plain: Server;
let node: TestNode;

/** Listens on a loopback port, counting the connections `event` reports. */
async function listen(server: Server, event: 'connection' | 'secureConnection', name: keyof typeof connections) {
  server.keepAliveTimeout = 65_000;
  server.on(event, (socket: Socket) => {
    connections[name]++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

test.before(async () => {
  const { cert, key } = await makeCertificate({ name: 'localhost' });
  // the mock upstream's /echo_sni (spec/fixtures/mock_upstream.lua): the SNI it was sent
  tls = createHttpsServer({ cert, key }, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`SNI=${(req.socket as TLSSocket).servername}`);
  });
  const tlsPort = await listen(tls, 'secureConnection', 'tls');
  plain = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(req.headers.host);
  });
  const plainPort = await listen(plain, 'connection', 'plain');
  node = await startTestNode({
    snapshot: {
      services: [
        { name: 'tls', url: `https://127.0.0.1:${tlsPort}` },
        { name: 'tls2', url: `https://localhost:${tlsPort}` },
        { name: 'plain', url: `http://127.0.0.1:${plainPort}` },
      ],
      routes: [
        { name: 'one-two', service: 'tls', hosts: ['one.test', 'two.test'], preserve_host: true },
        { name: 'three', service: 'tls2', hosts: ['three.test'] },
        // proxied from @unbuffered (nginx.conf), which proxy_passes the same way
        { name: 'unbuffered', service: 'tls', hosts: ['four.test'], preserve_host: true, request_buffering: false, response_buffering: false },
        { name: 'plain', service: 'plain', hosts: ['plain-one.test', 'plain-two.test'], preserve_host: true },
      ],
    },
  });
});

test.after.always(async () => {
  await node?.dispose();
  for (const socket of sockets) socket.destroy();
  await Promise.all([tls, plain].map((server) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))));
});

/** The SNI the https upstream saw, and how many TLS connections it accepted for the request. */
async function sni(host: string) {
  const before = connections.tls;
  const res = await httpGet(node.url('/echo_sni'), { headers: { host } });
  return `${res.status} ${res.body}, new connections: ${connections.tls - before}`;
}

test.serial('https: a reused upstream connection carries the request\'s SNI (Kong pools by ip|port|sni)', async (t) => {
  t.is(await sni('one.test'), '200 SNI=one.test, new connections: 1');
  t.is(await sni('two.test'), '200 SNI=two.test, new connections: 1');
  // tls2's localhost is the same 127.0.0.1:port, with the SNI localhost
  t.is(await sni('three.test'), '200 SNI=localhost, new connections: 1');
  // the worker's first SNI to the address keeps alive
  t.is(await sni('one.test'), '200 SNI=one.test, new connections: 0');
  // differs: any other SNI to it gets a connection per request (Kong: a pool of its own)
  t.is(await sni('two.test'), '200 SNI=two.test, new connections: 1');
  t.is(await sni('three.test'), '200 SNI=localhost, new connections: 1');
  t.is(await sni('four.test'), '200 SNI=four.test, new connections: 1');
});

test.serial('http: one pool per ip|port, whatever the Host (kong/init.lua:1383)', async (t) => {
  const before = connections.plain;
  for (const host of ['plain-one.test', 'plain-two.test', 'plain-one.test']) {
    const res = await httpGet(node.url('/'), { headers: { host } });
    t.is(`${res.status} ${res.body}`, `200 ${host}`);
  }
  t.is(connections.plain - before, 1);
});
