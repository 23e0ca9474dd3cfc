import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import test from 'ava';
import { stringify } from 'yaml';
import { request } from '../helpers/backend.ts';
import { startTestGateway, writeConfig } from '../helpers/gateway.ts';
import { makeCertificate } from '../helpers/tls-certificates.ts';

// Certificates from kong.yml and from the Admin API reach the proxy's TLS listener: the control
// plane compiles them into the snapshot, and the next handshake naming an SNI gets its certificate
// (the worker takes the new snapshot in ssl_certificate_by_lua itself).

function subjectOf(port: number, servername: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false });
    socket.once('secureConnect', () => {
      resolve(socket.getPeerCertificate().subject.CN);
      socket.end();
    });
    socket.once('error', reject);
  });
}

test('kong.yml certificates with nested snis are served; one added through the Admin API is served at once; GET / lists the listeners', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'certificates-proxy-'));
  const declared = await makeCertificate({ name: 'declared.test' });
  const yaml = stringify({ _format_version: '3.0', certificates: [{ ...declared, snis: [{ name: 'declared.test' }, { name: '*.declared.test' }] }] });
  const gateway = await startTestGateway({ configFile: writeConfig(dir, yaml), dir, node: { proxyListen: '127.0.0.1:0, 127.0.0.1:0 ssl' } });
  t.teardown(async () => {
    await gateway.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const port = Number(new URL(gateway.node.proxySslUrl!).port);
  t.is(await subjectOf(port, 'declared.test'), 'declared.test');
  t.is(await subjectOf(port, 'www.declared.test'), 'declared.test');
  t.is(await subjectOf(port, 'added.test'), 'localhost');

  const added = await makeCertificate({ name: 'added.test' });
  const res = await request(`${gateway.adminUrl}/certificates`, { method: 'POST', json: { ...added, snis: ['added.test'] } });
  t.is(res.status, 201);
  // The write is answered once the node runs it.
  t.is(await subjectOf(port, 'added.test'), 'added.test');

  await request(`${gateway.adminUrl}/certificates/added.test`, { method: 'DELETE' });
  t.is(await subjectOf(port, 'added.test'), 'localhost');
  t.false(gateway.logs.some((line) => line.includes('PRIVATE KEY')), 'no key in the logs');

  // GET / lists the node's proxy listeners as kong/conf_loader/listeners.lua parses them, with the ports bound.
  const root = await request(`${gateway.adminUrl}/`);
  const listeners = root.body.configuration.proxy_listeners as Array<Record<string, unknown>>;
  t.deepEqual(listeners.map(({ ip, ssl, http2, reuseport }) => ({ ip, ssl, http2, reuseport })), [
    { ip: '127.0.0.1', ssl: false, http2: false, reuseport: false },
    { ip: '127.0.0.1', ssl: true, http2: false, reuseport: false },
  ]);
  t.is(listeners[1]?.port, port);
  t.is(listeners[1]?.listener, `127.0.0.1:${port} ssl`);
  t.is(listeners[0]?.['backlog=%d+'], false);
});
