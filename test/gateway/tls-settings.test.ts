import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect, type SecureVersion } from 'node:tls';
import test from 'ava';
import { readGatewaySettings } from '../../gateway/local/settings.ts';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';

// KONG_SSL_CIPHER_SUITE, KONG_SSL_CIPHERS and KONG_SSL_PROTOCOLS as Kong 3.9.3's conf loader
// applies them (kong/conf_loader/parse.lua:420-459, the suites of conf_loader/constants.lua:15-75,
// the defaults of kong_defaults.lua:57-61): a named suite decides everything; `custom` takes the
// ciphers and protocols as given.

const LISTEN = '127.0.0.1:0, 127.0.0.1:0 ssl';

/** A handshake pinned to one TLS version (and optionally ciphers): the version and cipher agreed, or the error. */
function handshake(node: TestNode, version: SecureVersion, ciphers?: string): Promise<{ protocol: string | null; cipher: string } | Error> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: Number(new URL(node.proxySslUrl!).port),
      servername: 'localhost',
      minVersion: version,
      maxVersion: version,
      ...(ciphers ? { ciphers } : {}),
      rejectUnauthorized: false,
    });
    socket.once('secureConnect', () => {
      resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().name });
      socket.end();
    });
    socket.once('error', (error) => resolve(error));
  });
}

const renderedLines = (node: TestNode) => readFileSync(join(node.prefix, 'nginx.conf'), 'utf8').split('\n').map((line) => line.trim());

test('a suite Kong does not have, fips, or a protocol OpenSSL does not know: one line naming the variable', (t) => {
  t.throws(() => readGatewaySettings({ KONG_SSL_CIPHER_SUITE: 'strong' }), { message: /^KONG_SSL_CIPHER_SUITE: Undefined cipher suite strong/ });
  t.throws(() => readGatewaySettings({ KONG_SSL_CIPHER_SUITE: 'fips' }), { message: /^KONG_SSL_CIPHER_SUITE: fips needs a FIPS build/ });
  t.throws(() => readGatewaySettings({ KONG_SSL_CIPHER_SUITE: 'custom', KONG_SSL_PROTOCOLS: 'TLSv1.2 SSLv3' }), { message: /^KONG_SSL_PROTOCOLS: unknown protocol "SSLv3"/ });
  // a named suite ignores KONG_SSL_PROTOCOLS, as Kong's documentation of ssl_protocols says
  t.notThrows(() => readGatewaySettings({ KONG_SSL_PROTOCOLS: 'SSLv3' }));
});

test('modern (constants.lua:17-21): TLS 1.3 only, no ciphers line, no DH group', async (t) => {
  const node = await startTestNode({ proxyListen: LISTEN, sslCipherSuite: 'modern' });
  t.teardown(() => node.dispose());
  const lines = renderedLines(node);
  t.true(lines.includes('ssl_protocols TLSv1.3;'));
  t.false(lines.some((line) => line.startsWith('ssl_ciphers ') || line.startsWith('ssl_dhparam ')));
  t.like(await handshake(node, 'TLSv1.3'), { protocol: 'TLSv1.3' });
  t.true((await handshake(node, 'TLSv1.2')) instanceof Error, 'TLS 1.2 refused');
});

test('custom (kong_defaults.lua:57-61): the protocols and ciphers given, prefer_server_ciphers on', async (t) => {
  const node = await startTestNode({
    proxyListen: LISTEN,
    sslCipherSuite: 'custom',
    sslProtocols: 'TLSv1.2',
    sslCiphers: 'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384',
  });
  t.teardown(() => node.dispose());
  const lines = renderedLines(node);
  t.true(lines.includes('ssl_protocols TLSv1.2;'));
  t.true(lines.includes('ssl_prefer_server_ciphers on;'));
  const agreed = await handshake(node, 'TLSv1.2');
  t.like(agreed, { protocol: 'TLSv1.2' });
  t.regex((agreed as { cipher: string }).cipher, /^ECDHE-(?:ECDSA|RSA)-AES256-GCM-SHA384$/);
  t.true((await handshake(node, 'TLSv1.2', 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256')) instanceof Error, 'a cipher outside the list');
  t.true((await handshake(node, 'TLSv1.3')) instanceof Error, 'TLS 1.3 refused');
});
