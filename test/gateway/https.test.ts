import test from 'ava';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { promisify } from 'node:util';
import { readGatewaySettings } from '../../gateway/local/settings.ts';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import type { SnapshotInput } from '../helpers/snapshot-builder.ts';
import { echoRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';

// Kong 3.9.3: proxy_listen's default (kong/templates/kong_defaults.lua:27), the default
// certificates (kong/cmd/utils/prefix_handler.lua:103-197), the TLS settings of the intermediate
// suite (kong/conf_loader/constants.lua:22-35, parse.lua:420-436) and the https-only routes of
// kong/runloop/handler.lua:1260-1279, with the cases of spec/02-integration/05-proxy/06-ssl_spec.lua.
// `npm start`'s https address and curl command: test/scripts/npm-start.test.ts.

const run = promisify(execFile);
const TLS_LISTEN = '127.0.0.1:0, 127.0.0.1:0 http2 ssl';

let upstream: Upstream;
let node: TestNode;
let ca: string;

function snapshot(): SnapshotInput {
  return {
    services: [{ name: 'echo', url: upstream.url }],
    routes: [
      { name: 'both', service: 'echo', paths: ['/both'] },
      { name: 'https-only', service: 'echo', protocols: ['https'], paths: ['/secure'] },
      { name: 'redirect-301', service: 'echo', protocols: ['https'], hosts: ['example.com'], paths: ['/redirect-301'], https_redirect_status_code: 301 },
      { name: 'redirect-302', service: 'echo', protocols: ['https'], hosts: ['example.com'], paths: ['/redirect-302'], https_redirect_status_code: 302 },
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(echoRequest);
  node = await startTestNode({ proxyListen: TLS_LISTEN, snapshot: snapshot() });
  // both default certificates (RSA and ECDSA): which one a client gets depends on its sigalgs
  ca = readFileSync(join(node.prefix, 'ssl', 'kong-default-ca.crt'), 'utf8');
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

function sslPort(n: TestNode): number {
  return Number(new URL(n.proxySslUrl!).port);
}

/** One TLS handshake: the negotiated protocol, ALPN and the server's certificate. */
function handshake(n: TestNode, options: { servername?: string; sigalgs?: string; ca?: string } = {}) {
  return new Promise<{ protocol: string | null; alpn: string | false | null; cert: PeerCertificate }>((resolve, reject) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: sslPort(n),
      servername: options.servername ?? 'localhost',
      ca: options.ca ?? ca,
      ALPNProtocols: ['h2', 'http/1.1'],
      ...(options.sigalgs ? { sigalgs: options.sigalgs } : {}),
      // the default certificate names localhost only: the chain is checked, the name is not
      checkServerIdentity: () => undefined,
    });
    socket.once('secureConnect', () => {
      resolve({ protocol: socket.getProtocol(), alpn: socket.alpnProtocol, cert: socket.getPeerCertificate() });
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** GET over https (HTTP/1.1) trusting the default certificate, by the name it carries. */
function httpsGet(n: TestNode, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: sslPort(n), path, servername: 'localhost', ca, headers: { host: 'localhost', ...headers }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('KONG_PROXY_LISTEN in Kong syntax: a plain and an "http2 ssl" listener, rendered for nginx 1.22', async (t) => {
  const conf = readFileSync(join(node.prefix, 'nginx.conf'), 'utf8');
  const listens = conf.match(/^\s*listen 127\.0\.0\.1:\d+.*;$/gm)!.map((line) => line.trim().replace(/:\d+/, ':PORT'));
  t.deepEqual(listens, ['listen 127.0.0.1:PORT;', 'listen 127.0.0.1:PORT ssl http2;']);
  t.regex(node.proxyUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.regex(node.proxySslUrl!, /^https:\/\/127\.0\.0\.1:\d+$/);
});

test('KONG_PROXY_LISTEN defaults to Kong\'s (kong_defaults.lua:27); a flag Kong does not know is one line naming the variable', (t) => {
  t.is(readGatewaySettings({}).node!.proxyListen, '0.0.0.0:8000 reuseport backlog=16384, 0.0.0.0:8443 http2 ssl reuseport backlog=16384');
  t.throws(() => readGatewaySettings({ KONG_PROXY_LISTEN: '127.0.0.1:8000, 127.0.0.1:8443 ssl quic' }), {
    message: /^KONG_PROXY_LISTEN must be of form: \[off\] \| <ip>:<port> \[ssl\] \[http2\].*; got "127\.0\.0\.1:8443 ssl quic"$/,
  });
  t.throws(() => readGatewaySettings({ KONG_PROXY_LISTEN: 'off' }), { message: /^KONG_PROXY_LISTEN: off is not supported/ });
  t.deepEqual(readGatewaySettings({ KONG_SSL_CERT: '/a.crt,/b.crt', KONG_SSL_CERT_KEY: '/a.key, /b.key' }).node!.sslCertKey, ['/a.key', '/b.key']);
});

test('the TLS settings are those of Kong 3.9.3\'s template and intermediate suite', (t) => {
  const conf = readFileSync(join(node.prefix, 'nginx.conf'), 'utf8');
  const lines = new Set(conf.split('\n').map((line) => line.trim()));
  // kong/conf_loader/constants.lua:23 (protocols), :24-32 (ciphers), :34 (prefer_server_ciphers)
  t.true(lines.has('ssl_protocols TLSv1.2 TLSv1.3;'));
  t.true(lines.has('ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305;'));
  t.true(lines.has('ssl_prefer_server_ciphers off;'));
  // kong_defaults.lua:62-64 (ssl_session_tickets, ssl_session_timeout, ssl_session_cache_size);
  // nginx_kong.lua:125 (ssl_session_cache shared:SSL:…)
  t.true(lines.has('ssl_session_tickets on;'));
  t.true(lines.has('ssl_session_timeout 1d;'));
  t.true(lines.has('ssl_session_cache   shared:SSL:10m;'));
  // constants.lua:33: dhparams ffdhe2048, written to <prefix>/ssl/ffdhe2048.pem (prefix_handler.lua:70-100)
  t.true(lines.has(`ssl_dhparam '${join(node.prefix, 'ssl', 'ffdhe2048.pem')}';`));
  // nginx_kong.lua:121-124: the RSA then the ECDSA default certificate
  const certificates = [...lines].filter((line) => line.startsWith('ssl_certificate '));
  t.deepEqual(certificates, [
    `ssl_certificate     '${join(node.prefix, 'ssl', 'kong-default.crt')}';`,
    `ssl_certificate     '${join(node.prefix, 'ssl', 'kong-default-ecdsa.crt')}';`,
  ]);
});

test('HTTP/2 is negotiated by ALPN on the ssl listener, and proxies, a body without a length too', async (t) => {
  const session = http2Connect(node.proxySslUrl!, { ca, servername: 'localhost', checkServerIdentity: () => undefined });
  t.teardown(() => session.close());
  const exchange = (headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; json: any }>((resolve, reject) => {
      session.once('error', reject);
      const stream = session.request({ ':authority': 'localhost', ...headers });
      let status = 0;
      let text = '';
      stream.setEncoding('utf8');
      stream.on('response', (response) => (status = Number(response[':status'])));
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => resolve({ status, json: JSON.parse(text) }));
      stream.on('error', reject);
      // no content-length: the body is DATA frames up to END_STREAM
      stream.end(body);
    });
  const get = await exchange({ ':path': '/both/x' });
  t.is(session.alpnProtocol, 'h2');
  t.is(get.status, 200);
  t.is(get.json.url, '/x');
  // kong/runloop/handler.lua: Via names the client's HTTP version; the scheme goes upstream
  t.is(get.json.headers.via, '2 kong/3.9.3');
  t.is(get.json.headers['x-forwarded-proto'], 'https');
  const post = await exchange({ ':path': '/both/y', ':method': 'POST' }, 'name=rex');
  t.is(post.status, 200);
  t.is(post.json.method, 'POST');
  t.is(post.json.body, 'name=rex');
});

test('the default certificate is served for any name: RSA 2048, or ECDSA P-256 to a client that only takes ECDSA', async (t) => {
  const rsa = await handshake(node, { servername: 'any.example.net', sigalgs: 'rsa_pss_rsae_sha256:RSA+SHA256' });
  t.is(rsa.cert.subject.CN, 'localhost');
  t.is(rsa.cert.subject.O, 'Kong');
  t.is(rsa.cert.bits, 2048);
  const ecdsa = await handshake(node, { servername: 'other.example.org', sigalgs: 'ECDSA+SHA256' });
  t.is(ecdsa.cert.subject.CN, 'localhost');
  t.is(ecdsa.cert.asn1Curve, 'prime256v1');
  const files = ['kong-default.crt', 'kong-default-ecdsa.crt'].map((name) => new X509Certificate(readFileSync(join(node.prefix, 'ssl', name))));
  t.deepEqual(files.map((cert) => cert.fingerprint256), [rsa.cert.fingerprint256, ecdsa.cert.fingerprint256]);
  t.false(files[0]!.ca);
});

test('TLS 1.1 is refused, TLS 1.2 and 1.3 are served (kong_defaults.lua:59 ssl_protocols)', async (t) => {
  const connect = `127.0.0.1:${sslPort(node)}`;
  const client = (version: string) => {
    const running = run('openssl', ['s_client', '-connect', connect, '-servername', 'localhost', version, '-cipher', 'DEFAULT@SECLEVEL=0'], { timeout: 10_000 });
    running.child.stdin?.end(); // s_client leaves once its input ends
    return running.then(
      ({ stdout }) => ({ ok: true, out: stdout }),
      (error: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );
  };
  const [tls11, tls12, tls13] = await Promise.all([client('-tls1_1'), client('-tls1_2'), client('-tls1_3')]);
  t.false(tls11.ok, tls11.out);
  // the server answers the ClientHello with alert 70, protocol_version
  t.regex(tls11.out, /alert protocol version/);
  t.true(tls12.ok, tls12.out);
  t.regex(tls12.out, /Protocol\s*: TLSv1\.2/);
  t.true(tls13.ok, tls13.out);
  t.regex(tls13.out, /Protocol\s*: TLSv1\.3/);
});

test('06-ssl_spec.lua:360-392: an https-only route answers 426 over plain http, and proxies over TLS', async (t) => {
  const plain = await httpGet(node.url('/secure/a'));
  t.is(plain.status, 426);
  t.is(plain.json.message, 'Please use HTTPS protocol');
  t.regex(String(plain.headers.connection), /Upgrade/);
  t.is(plain.headers.upgrade, 'TLS/1.2, HTTP/1.1');
  const tls = await httpsGet(node, '/secure/a');
  t.is(tls.status, 200);
  t.is(JSON.parse(tls.body).url, '/a');
  // a route for both schemes serves both
  t.is((await httpGet(node.url('/both/b'))).status, 200);
});

test('06-ssl_spec.lua:394-417: https_redirect_status_code 301 and 302 redirect to https, query kept', async (t) => {
  const moved = await httpGet(node.url('/redirect-301'), { headers: { host: 'example.com' } });
  t.is(moved.status, 301);
  t.is(moved.headers.location, 'https://example.com/redirect-301');
  const found = await httpGet(node.url('/redirect-302?foo=bar'), { headers: { host: 'example.com' } });
  t.is(found.status, 302);
  t.is(found.headers.location, 'https://example.com/redirect-302?foo=bar');
  const tls = await httpsGet(node, '/redirect-301', { host: 'example.com' });
  t.is(tls.status, 200);
});

test('06-ssl_spec.lua:420-443, 482-511: X-Forwarded-Proto from a client outside trusted_ips is ignored', async (t) => {
  const res = await httpGet(node.url('/secure/a'), { headers: { 'x-forwarded-proto': 'https' } });
  t.is(res.status, 426);
});

test('06-ssl_spec.lua:445-480: X-Forwarded-Proto: https from trusted_ips is honoured, anything else is not', async (t) => {
  const trusting = await startTestNode({ proxyListen: '127.0.0.1:0', trustedIps: ['127.0.0.1'], snapshot: snapshot() });
  t.teardown(() => trusting.dispose());
  const honoured = await httpGet(trusting.url('/secure/a'), { headers: { 'x-forwarded-proto': 'https' } });
  t.is(honoured.status, 200);
  t.is(honoured.json.headers['x-forwarded-proto'], 'https');
  t.is((await httpGet(trusting.url('/secure/a'), { headers: { 'x-forwarded-proto': 'httpsa' } })).status, 426);
  t.is((await httpGet(trusting.url('/secure/a'))).status, 426);
});

test('the default certificates are made once: a node restarted on the same prefix serves the same ones', async (t) => {
  const prefix = mkdtempSync(join(tmpdir(), 'https-prefix-'));
  t.teardown(() => rmSync(prefix, { recursive: true, force: true }));
  const first = await startTestNode({ prefix, proxyListen: '127.0.0.1:0 ssl', snapshot: snapshot() });
  const trust = () => readFileSync(join(prefix, 'ssl', 'kong-default-ca.crt'), 'utf8');
  const before = (await handshake(first, { ca: trust() })).cert.fingerprint256;
  await first.dispose();
  const second = await startTestNode({ prefix, proxyListen: '127.0.0.1:0 ssl', snapshot: snapshot() });
  t.teardown(() => second.dispose());
  const after = (await handshake(second, { ca: trust() })).cert.fingerprint256;
  t.is(after, before);
  t.is(second.proxyUrl, second.proxySslUrl!);
});

test('ssl_cert and ssl_cert_key (PEM content) replace the default certificate; a key of another certificate is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'https-cert-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const make = async (name: string) => {
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`), '-days', '1', '-subj', `/CN=${name}`]);
    return { cert: readFileSync(join(dir, `${name}.crt`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
  };
  const [own, other] = await Promise.all([make('own.test'), make('other.test')]);
  const custom = await startTestNode({ proxyListen: '127.0.0.1:0 ssl', sslCert: [own.cert], sslCertKey: [own.key], snapshot: snapshot() });
  t.teardown(() => custom.dispose());
  const served = await handshake(custom, { ca: own.cert, servername: 'own.test' });
  t.is(served.cert.subject.CN, 'own.test');
  await t.throwsAsync(startTestNode({ proxyListen: '127.0.0.1:0 ssl', sslCert: [own.cert], sslCertKey: [other.key], snapshot: snapshot() }), {
    message: 'KONG_SSL_CERT_KEY: key 1 does not match certificate 1 of KONG_SSL_CERT',
  });
});
