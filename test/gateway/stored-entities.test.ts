import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import knex from 'knex';
import { request } from '../helpers/backend.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { makeCertificate } from '../helpers/tls-certificates.ts';

// A gateway.sqlite written before entities carried every Kong field still loads: the fields added
// since (a service's TLS fields, a route's snis/sources/destinations, a key's ttl) read as null.
test('rows stored without the newer Kong fields load with them as null', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'stored-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.sqlite');
  const db = knex({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
  await db.schema.createTable('entities', (table) => {
    table.string('type', 32).notNullable();
    table.string('id', 36).notNullable();
    table.text('body').notNullable();
    table.primary(['type', 'id']);
  });
  const ids = { s: '6b1b1b7e-0000-4000-8000-000000000001', r: '6b1b1b7e-0000-4000-8000-000000000002', c: '6b1b1b7e-0000-4000-8000-000000000003', k: '6b1b1b7e-0000-4000-8000-000000000004' };
  const old = {
    services: { id: ids.s, name: 'old', protocol: 'http', host: 'h', port: 80, path: null, retries: 5, connect_timeout: 1, write_timeout: 1, read_timeout: 1, enabled: true, tags: null, created_at: 1, updated_at: 1 },
    routes: { id: ids.r, name: 'old', service: { id: ids.s }, protocols: ['http'], methods: null, hosts: null, paths: ['/'], headers: null, strip_path: true, preserve_host: false, regex_priority: 0, path_handling: 'v0', https_redirect_status_code: 426, request_buffering: true, response_buffering: true, tags: null, created_at: 1, updated_at: 1 },
    consumers: { id: ids.c, username: 'old', custom_id: null, tags: null, created_at: 1, updated_at: 1 },
    keyauth_credentials: { id: ids.k, consumer: { id: ids.c }, key: 'x', tags: null, created_at: 1, expires_at: null },
  };
  for (const [type, body] of Object.entries(old)) await db('entities').insert({ type, id: body.id, body: JSON.stringify(body) });
  await db.destroy();

  const gateway = await startTestGateway({ configFile: '', dir, dataFile: file });
  t.teardown(() => gateway.dispose());
  const admin = (path: string) => request(`${gateway.adminUrl}${path}`).then((r) => r.body);
  t.like(await admin('/services/old'), { client_certificate: null, tls_verify: null, tls_verify_depth: null, ca_certificates: null });
  t.like(await admin('/routes/old'), { snis: null, sources: null, destinations: null });
  t.like(await admin(`/key-auths/${ids.k}`), { key: 'x', ttl: null });
  t.is((statSync(file).mode & 0o777).toString(8), '600', 'a store made by an earlier version is made owner-only');
});

// Issue 12: an entity the gateway cannot run is never stored, never half applied: the write is
// refused before the store commits, nothing is persisted or published, and writes go on.
test('a write the data plane could not run is neither persisted nor published', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'stored-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = await startTestGateway({ configFile: '', dir });
  const admin = (path: string, init: RequestInit & { json?: unknown } = {}) => request(`${first.adminUrl}${path}`, init);
  // the hash the data plane runs, as a control plane lists it (a write answers once it runs it)
  const running = async () => ((await admin('/clustering/data-planes')).body.data as Array<{ config_hash: string }>)[0]?.config_hash;
  const hash = await running();
  t.truthy(hash);
  const refused = await admin('/routes', { method: 'POST', json: { name: 'lookahead', paths: ['~/(?=x)'] } });
  t.is(refused.status, 400);
  t.is(await running(), hash, 'nothing published');
  t.is((await admin('/consumers', { method: 'POST', json: { username: 'fine' } })).status, 201);
  t.not(await running(), hash);
  await first.close();

  const reopened = await startTestGateway({ configFile: '', dir });
  t.teardown(() => reopened.dispose());
  t.deepEqual((await request(`${reopened.adminUrl}/routes`)).body.data, []);
  t.deepEqual((await request(`${reopened.adminUrl}/consumers`)).body.data.map((c: { username: string }) => c.username), ['fine']);
});

// Certificates' private keys (and key-auth keys stored in clear) are in the store and in every
// snapshot: owner-only whatever the umask, as Kong's data-plane store is (lua-resty-lmdb: files
// 0600) and as cmd/ssl-certificates.ts writes the default keys.
test('the store and the node\'s snapshot.json are owner-only under a permissive umask', async (t) => {
  const previous = process.umask(0o022);
  t.teardown(() => process.umask(previous));
  const dir = mkdtempSync(join(tmpdir(), 'stored-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const gateway = await startTestGateway({ configFile: '', dir });
  t.teardown(() => gateway.dispose());
  const files = ['gateway.sqlite', 'gateway.sqlite-wal', 'gateway.sqlite-shm', 'gateway/node/snapshot.json'].map((file) => join(dir, file));
  const modes = () => files.map((file) => `${file}: ${existsSync(file) ? (statSync(file).mode & 0o777).toString(8) : 'missing'}`);
  const ownerOnly = files.map((file) => `${file}: 600`);
  t.deepEqual(modes(), ownerOnly, 'as started (the snapshot the control plane wrote)');
  const pair = await makeCertificate({ name: 'modes.test' });
  const written = await request(`${gateway.adminUrl}/certificates`, { method: 'POST', json: { ...pair, snis: ['modes.test'] } });
  t.is(written.status, 201);
  t.true(readFileSync(files[3]!, 'utf8').includes('modes.test'), 'the data plane wrote the new snapshot');
  t.deepEqual(modes(), ownerOnly, 'after a write (the snapshot the data plane wrote)');
});
