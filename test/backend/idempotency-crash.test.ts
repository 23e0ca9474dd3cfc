// Idempotency-Key records commit in the same transaction as the write they describe: a backend
// killed with SIGKILL mid-request leaves both or neither, on SQLite and on PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { readBackendConfig, startBackend } from '../../backend/src/index.ts';
import { sqliteConfig } from '../../packages/node-runtime/sqlite.js';
import { request } from '../helpers/backend.ts';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { spawnTs, type SpawnedProcess } from '../helpers/process.ts';
import { pollUntil } from '../helpers/poll.ts';

const test = anyTest.serial as TestFn<{ postgres: TestPostgres }>;

test.before(async (t) => {
  t.context.postgres = await startTestPostgres();
});
test.after.always(async (t) => {
  await t.context.postgres?.dispose();
});

interface Store {
  env: NodeJS.ProcessEnv;
  /** A connection of the test's own to the backend's database. */
  open(): Knex;
}

function sqliteStore(t: ExecutionContext): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-crash-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  return Promise.resolve({ env: { DATA_DIR: dataDir }, open: () => knex(sqliteConfig(join(dataDir, 'animal-store.sqlite'))) });
}

let databases = 0;
async function postgresStore(t: ExecutionContext<{ postgres: TestPostgres }>): Promise<Store> {
  const url = await t.context.postgres.createDatabase(`crash_${++databases}`);
  return { env: { DATABASE_URL: url }, open: () => knex({ client: 'pg', connection: url }) };
}

async function startProcess(t: ExecutionContext, store: Store): Promise<{ backend: SpawnedProcess; url: string }> {
  const backend = spawnTs('backend/src/main.ts', [], { BACKEND_PORT: '0', ...store.env });
  t.teardown(() => backend.child.kill('SIGKILL'));
  const [, url] = await backend.waitFor(/listening on (http:\/\/\S+)/);
  return { backend, url: url! };
}

/**
 * A new backend on the store the killed one left, in this worker: what it is tested for is the
 * store (a fresh backend reads it), not its process, whose start and SIGKILL startProcess covers
 * (~0.7 CPU-s a backend process, docs/testing.md).
 */
async function restart(t: ExecutionContext, store: Store): Promise<string> {
  const backend = await startBackend(readBackendConfig({ BACKEND_PORT: '0', ...store.env }));
  t.teardown(() => backend.close());
  return backend.url;
}

const createWithKey = (url: string, key: string) =>
  request(`${url}/pets`, { method: 'POST', headers: { 'Idempotency-Key': key, 'X-Consumer-ID': 'crash' }, json: { name: key, categoryId: 1 } });

/** For every key: is there a pet named after it, and a record of it? */
async function outcomes(store: Store, keys: string[]): Promise<Array<{ key: string; pets: number; records: number }>> {
  const db = store.open();
  try {
    const pets = await db('pets').whereIn('name', keys).select('name');
    const records = await db('idempotency_keys').whereIn('key', keys).select('key');
    return keys.map((key) => ({
      key,
      pets: pets.filter((row) => row.name === key).length,
      records: records.filter((row) => row.key === key).length,
    }));
  } finally {
    await db.destroy();
  }
}

/**
 * Eight clients send keyed POSTs until the backend is killed with SIGKILL after 40 answers, with
 * requests in flight. Afterwards every key has both its pet and its record, or neither; sending
 * every key again to a new backend gives exactly one pet per key, replayed where it was recorded.
 */
async function killDuringTraffic(t: ExecutionContext, store: Store): Promise<void> {
  const { backend, url } = await startProcess(t, store);
  const sent: string[] = [];
  let answered = 0;
  let killed = false;
  const client = async (id: number) => {
    for (let i = 0; !killed; i++) {
      const key = `crash-${id}-${i}`;
      sent.push(key);
      try {
        if ((await createWithKey(url, key)).status === 201 && ++answered === 40) {
          killed = true;
          backend.child.kill('SIGKILL');
        }
      } catch {
        return; // the connection died with the process
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, id) => client(id)));
  t.is((await backend.exited).signal, 'SIGKILL');

  const after = await outcomes(store, sent);
  t.deepEqual(after.filter((o) => o.pets !== o.records || o.pets > 1), [], 'a pet without its record, or a record without its pet');
  t.true(after.filter((o) => o.records === 1).length >= 40, 'every acknowledged write survived');

  const url2 = await restart(t, store);
  for (const { key, records } of after) {
    const again = await createWithKey(url2, key);
    t.is(again.status, 201);
    t.is(again.headers.get('idempotent-replayed'), records === 1 ? 'true' : null, key);
  }
  t.true((await outcomes(store, sent)).every((o) => o.pets === 1 && o.records === 1));
}

test('SQLite: SIGKILL during keyed writes leaves every pet with its record, or neither', async (t) => {
  await killDuringTraffic(t, await sqliteStore(t));
});

test('PostgreSQL: SIGKILL during keyed writes leaves every pet with its record, or neither', async (t) => {
  await killDuringTraffic(t, await postgresStore(t));
});

test('PostgreSQL: SIGKILL after the pet is written and before its record is leaves neither', async (t) => {
  const store = await postgresStore(t);
  const { backend, url } = await startProcess(t, store);
  // A SHARE lock lets the backend read idempotency_keys and insert the pet, then holds its
  // transaction at the record's write.
  const db = store.open();
  t.teardown(() => db.destroy());
  const lock = await db.transaction();
  await lock.raw('LOCK TABLE idempotency_keys IN SHARE MODE');
  const pending = createWithKey(url, 'mid-request').catch(() => 'no answer');
  const watcher = new pg.Client({ connectionString: store.env.DATABASE_URL });
  await watcher.connect();
  t.teardown(() => watcher.end());
  await pollUntil('the backend to wait on the idempotency_keys lock', async () => {
    const { rows } = await watcher.query(
      "SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%idempotency_keys%'",
    );
    return rows.length > 0;
  }, { intervalMs: 20 });
  const { rows: claimed } = await watcher.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'");
  t.is(claimed[0].n, 1, 'the key is claimed while the request runs');
  const { rows: written } = await watcher.query(
    "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'pets' AND l.mode = 'RowExclusiveLock'",
  );
  t.is(written[0].n, 1, 'the pet is inserted, uncommitted');
  backend.child.kill('SIGKILL');
  t.is(await pending, 'no answer');
  await lock.rollback();

  t.deepEqual(await outcomes(store, ['mid-request']), [{ key: 'mid-request', pets: 0, records: 0 }]);
  const url2 = await restart(t, store);
  const retried = await createWithKey(url2, 'mid-request');
  t.is(retried.status, 201);
  t.is(retried.headers.get('idempotent-replayed'), null);
  t.deepEqual(await outcomes(store, ['mid-request']), [{ key: 'mid-request', pets: 1, records: 1 }]);
});
