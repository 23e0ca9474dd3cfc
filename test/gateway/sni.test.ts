import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import type { SnapshotInput } from '../helpers/snapshot-builder.ts';
import { makeCertificate } from '../helpers/tls-certificates.ts';
import { echoRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';

// The certificate a TLS handshake gets by the server name the client sends, and routes' snis,
// transcribed from Kong 3.9.3's spec/02-integration/05-proxy/06-ssl_spec.lua (its fixture
// certificates by their CN: ssl-example.com with an ECDSA alternative, ssl-alt.com, ssl-alt-alt.com;
// ours are made by openssl) and kong/runloop/certificate.lua's lookup.
const SPEC = '06-ssl_spec.lua';

let upstream: Upstream;
let node: TestNode;

const ids = { example: randomUUID(), alt: randomUUID(), altAlt: randomUUID() };

async function snapshot(): Promise<SnapshotInput> {
  const [example, exampleEcdsa, alt, altAlt, altAltEcdsa] = await Promise.all([
    makeCertificate({ name: 'ssl-example.com' }),
    makeCertificate({ name: 'ssl-example.com', type: 'ecdsa' }),
    makeCertificate({ name: 'ssl-alt.com' }),
    makeCertificate({ name: 'ssl-alt-alt.com' }),
    makeCertificate({ name: 'ssl-alt-alt.com', type: 'ecdsa' }),
  ]);
  const sni = (name: string, id: string) => ({ name, certificate: { id } });
  return {
    certificates: [
      { id: ids.example, ...example, cert_alt: exampleEcdsa.cert, key_alt: exampleEcdsa.key },
      { id: ids.alt, ...alt },
      { id: ids.altAlt, ...altAlt, cert_alt: altAltEcdsa.cert, key_alt: altAltEcdsa.key },
    ],
    snis: [
      sni('example.com', ids.example),
      sni('ssl1.com', ids.example),
      sni('*.wildcard.com', ids.alt),
      sni('wildcard.*', ids.alt),
      sni('wildcard.org', ids.altAlt),
      sni('test.wildcard.*', ids.altAlt),
      sni('*.www.wildcard.com', ids.altAlt),
    ],
    services: [
      { name: 'echo', url: upstream.url },
      { name: 'echo-any', url: `${upstream.url}/any` },
    ],
    routes: [
      { name: 'by-sni', service: 'echo', protocols: ['https'], snis: ['sni-route.test', '*.sni-wild.test'], paths: ['/sni'] },
      { name: 'dotted-snis', service: 'echo', protocols: ['https'], snis: ['dot.test.', '*.dot-wild.test.'], paths: ['/sni'] },
      { name: 'any-sni', service: 'echo-any', protocols: ['https'], paths: ['/sni'] },
      { name: 'global', service: 'echo', protocols: ['https'], hosts: ['global.com'] },
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(echoRequest);
  node = await startTestNode({ proxyListen: '127.0.0.1:0, 127.0.0.1:0 http2 ssl', snapshot: await snapshot() });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

const sslPort = () => Number(new URL(node.proxySslUrl!).port);

/** One handshake, the chain unchecked: the certificate the server chose. No servername: no SNI sent. */
function peerCertificate(servername?: string, sigalgs?: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: sslPort(),
      ...(servername ? { servername } : {}),
      ...(sigalgs ? { sigalgs } : {}),
      rejectUnauthorized: false,
    });
    socket.once('secureConnect', () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.once('error', reject);
  });
}

const cnOf = async (servername?: string, sigalgs?: string) => (await peerCertificate(servername, sigalgs)).subject.CN;

function httpsGet(path: string, servername: string, host = servername) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: sslPort(), path, servername, headers: { host }, rejectUnauthorized: false, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test(`the default certificate when the client sends no SNI, and requests go through (${SPEC}:301)`, async (t) => {
  t.is(await cnOf(), 'localhost');
  const res = await new Promise<number>((resolve, reject) => {
    httpsRequest({ host: '127.0.0.1', port: sslPort(), path: '/', headers: { host: 'global.com' }, rejectUnauthorized: false, agent: false }, (r) => {
      r.resume();
      resolve(r.statusCode!);
    })
      .on('error', reject)
      .end();
  });
  t.is(res, 200);
});

test(`the default certificate when no SNI matches (${SPEC}:314)`, async (t) => {
  t.is(await cnOf('test.com'), 'localhost');
});

test(`the configured certificate when the SNI matches (${SPEC}:319)`, async (t) => {
  t.is(await cnOf('ssl1.com'), 'ssl-example.com');
  t.is(await cnOf('example.com'), 'ssl-example.com');
  t.is(await cnOf('example.com.'), 'localhost', 'the name as sent: certificate.lua:336 server_name(), its trailing dot kept');
});

test(`wildcard SNIs: prefix, suffix, and exact before prefix before suffix (${SPEC}:328-357)`, async (t) => {
  t.is(await cnOf('test.wildcard.com'), 'ssl-alt.com', 'matches *.wildcard.com (prefix)');
  t.is(await cnOf('wildcard.eu'), 'ssl-alt.com', 'matches wildcard.* (suffix)');
  t.is(await cnOf('wildcard.org'), 'ssl-alt-alt.com', 'exact first');
  t.is(await cnOf('test.wildcard.org'), 'ssl-alt-alt.com', 'suffix third');
  t.is(await cnOf('test.www.wildcard.com'), 'ssl-alt-alt.com', 'matches *.www.wildcard.com');
});

test('the alternative pair: a client that takes ECDSA only gets the ECDSA certificate of the same SNI', async (t) => {
  const rsa = await peerCertificate('example.com', 'rsa_pss_rsae_sha256:rsa_pkcs1_sha256');
  const ecdsa = await peerCertificate('example.com', 'ecdsa_secp256r1_sha256');
  t.is(rsa.subject.CN, 'ssl-example.com');
  t.is(ecdsa.subject.CN, 'ssl-example.com');
  t.truthy(rsa.modulus, 'RSA');
  t.is(ecdsa.modulus, undefined);
  t.is(ecdsa.asn1Curve, 'prime256v1');
});

const upstreamPath = (res: { body: string }) => (JSON.parse(res.body) as { url: string }).url;

test('route snis: the route naming the SNI wins over one without snis on the same path (transform.lua:344-352, :605)', async (t) => {
  const routed = await httpsGet('/sni', 'sni-route.test');
  t.is(routed.status, 200);
  t.is(upstreamPath(routed), '/');
  t.is(upstreamPath(await httpsGet('/sni', 'a.sni-wild.test')), '/', '*.sni-wild.test by suffix');
  t.is(upstreamPath(await httpsGet('/sni', 'other.test')), '/any', 'another SNI: the route without snis');
});

test('route snis: a trailing dot is dropped from the route\'s value, not from the client\'s name (transform.lua:297-314, fields.lua:109-116)', async (t) => {
  t.is(upstreamPath(await httpsGet('/sni', 'dot.test')), '/', 'dot.test. matches dot.test');
  t.is(upstreamPath(await httpsGet('/sni', 'a.dot-wild.test')), '/', '*.dot-wild.test. matches by the suffix .dot-wild.test');
  t.is(upstreamPath(await httpsGet('/sni', 'sni-route.test.')), '/any', 'the client\'s sni-route.test. is not sni-route.test');
  t.is(upstreamPath(await httpsGet('/sni', 'dot.test.')), '/any', 'nor dot.test.: the route\'s dot is gone');
  t.is(upstreamPath(await httpsGet('/sni', 'a.dot-wild.test.')), '/any', 'nor a.dot-wild.test.');
});

test('route snis are not considered over plain HTTP: the https-only routes answer 426 (transform.lua:345-347)', async (t) => {
  const res = await httpGet(`${node.proxyUrl}/sni`);
  t.is(res.status, 426);
});
