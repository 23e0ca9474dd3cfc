// The storage layer on its own: the SQLite settings both SQLite files share, and the pets
// repository's change announcements, which keep the page cache right without callers' help.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import knex, { type Knex } from 'knex';
import { openDatabase } from '../../backend/src/index.ts';
import { sqliteConfig } from '../../packages/node-runtime/sqlite.js';
import { PetRepository } from '../../backend/src/pets/pet-repository.ts';

/** A database of the test's own in a new directory: closed, then removed, when the test ends (ava runs teardowns in reverse). */
async function openTestDatabase(t: ExecutionContext): Promise<{ dir: string; db: Knex }> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-repo-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = await openDatabase({ dataDir: dir });
  t.teardown(() => db.destroy());
  return { dir, db };
}

test('sqliteConfig opens files in WAL mode with synchronous=NORMAL, a busy timeout and foreign keys', async (t) => {
  const { dir } = await openTestDatabase(t);
  const db = knex(sqliteConfig(join(dir, 'other.sqlite')));
  try {
    const pragma = async (name: string) => Object.values((await db.raw(`PRAGMA ${name}`))[0])[0];
    t.is(await pragma('journal_mode'), 'wal');
    t.is(await pragma('synchronous'), 1); // NORMAL
    t.is(await pragma('busy_timeout'), 5000);
    t.is(await pragma('foreign_keys'), 1);
  } finally {
    await db.destroy();
  }
});

test('the backend store enforces foreign keys: an order for a missing pet cannot be inserted', async (t) => {
  const { db } = await openTestDatabase(t);
  await t.throwsAsync(
    db('orders').insert({ pet_id: 999, status: 'placed', created_at: 'x', updated_at: 'x' }),
    { message: /FOREIGN KEY constraint failed/ },
  );
});

test('a pet write announces a change at once, and again when its outermost transaction ends', async (t) => {
  const { db } = await openTestDatabase(t);
  const pets = new PetRepository(db);
  const seen: string[] = [];
  let phase = 'outside';
  pets.onChange(() => seen.push(phase));

  await pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
  t.deepEqual(seen, ['outside']);

  seen.length = 0;
  phase = 'inside';
  await db.transaction(async (trx) => {
    await trx.transaction(async (savepoint) => {
      await pets.setStatus(savepoint, 1, 'sold');
    });
    t.deepEqual(seen, ['inside'], 'a savepoint ending is not the end of the transaction');
    phase = 'committed';
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(seen, ['inside', 'committed']);

  seen.length = 0;
  phase = 'inside';
  await t.throwsAsync(
    db.transaction(async (trx) => {
      await pets.transition(trx, 1, 'sold', 'available');
      phase = 'rolled back';
      throw new Error('abort');
    }),
  );
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(seen, ['inside', 'rolled back'], 'a rollback restores rows a reader may have cached meanwhile');
  t.is((await pets.find(1))?.status, 'sold');
});
