import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import knex from 'knex';
import { EntityStore } from '../../gateway/local/control-plane/db/entity-store.ts';

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
  const old = {
    services: { id: 's', name: 'old', protocol: 'http', host: 'h', port: 80, path: null, retries: 5, connect_timeout: 1, write_timeout: 1, read_timeout: 1, enabled: true, tags: null, created_at: 1, updated_at: 1 },
    routes: { id: 'r', name: 'old', service: { id: 's' }, protocols: ['http'], methods: null, hosts: null, paths: ['/'], headers: null, strip_path: true, preserve_host: false, regex_priority: 0, path_handling: 'v0', https_redirect_status_code: 426, request_buffering: true, response_buffering: true, tags: null, created_at: 1, updated_at: 1 },
    keyauth_credentials: { id: 'k', consumer: { id: 'c' }, key: 'x', tags: null, created_at: 1, expires_at: null },
  };
  for (const [type, body] of Object.entries(old)) await db('entities').insert({ type, id: body.id, body: JSON.stringify(body) });
  await db.destroy();

  const store = await EntityStore.open(file);
  t.teardown(() => store.close());
  t.like(store.snapshot.get('services', 's'), { client_certificate: null, tls_verify: null, tls_verify_depth: null, ca_certificates: null });
  t.like(store.snapshot.get('routes', 'r'), { snis: null, sources: null, destinations: null });
  t.like(store.snapshot.get('keyauth_credentials', 'k'), { ttl: null });
});

// Issue 12: an entity the gateway cannot run is never stored, never half applied. A write whose
// result a beforeCommit check (the runtime compiling its router and plugins) refuses is not
// persisted, not published, and the store goes on taking writes.
test('a write a beforeCommit check refuses is neither persisted nor published', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'stored-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gateway.sqlite');
  const consumer = (id: string, username: string) => ({ id, username, custom_id: null, tags: null, created_at: 1, updated_at: 1 });
  const store = await EntityStore.open(file);
  const published: number[] = [];
  store.onChange((snapshot) => published.push(snapshot.version));
  store.beforeCommit((snapshot) => {
    if (snapshot.list('consumers').some((c) => c.username === 'uncompilable')) throw new Error('cannot compile');
  });
  const before = store.snapshot;
  await t.throwsAsync(store.write((draft) => draft.put('consumers', consumer('c1', 'uncompilable'))), { message: 'cannot compile' });
  t.is(store.snapshot, before);
  t.deepEqual(published, []);
  await store.write((draft) => draft.put('consumers', consumer('c2', 'fine')));
  t.deepEqual(published, [before.version + 1]);
  await store.close();

  const reopened = await EntityStore.open(file);
  t.teardown(() => reopened.close());
  t.deepEqual(reopened.snapshot.list('consumers').map((c) => c.username), ['fine']);
});
