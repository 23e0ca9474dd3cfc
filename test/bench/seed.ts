import type { Knex } from 'knex';
import { join } from 'node:path';
import { openDatabase } from '../../backend/src/index.ts';
import { spawnTs, type SpawnedProcess } from '../helpers/process.ts';

/** Inserts `count` pets in one statement (SQLite recursive CTE): a million rows in seconds. */
export async function seedPets(db: Knex, count: number): Promise<void> {
  await db.raw(
    `INSERT INTO pets (name, category_id, status)
     WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
     SELECT 'pet-' || n, (n % 50) + 1,
            CASE n % 3 WHEN 1 THEN 'available' WHEN 2 THEN 'pending' ELSE 'sold' END
     FROM seq`,
    [count],
  );
}

/**
 * The backend as its own process on a free port, its store in `<dir>/backend` seeded with `pets`
 * pets first; the process is pushed on `processes` for the caller to stop.
 */
export async function startSeededBackend(dir: string, processes: SpawnedProcess[], pets = 10_000): Promise<{ url: string; pid: number }> {
  const dataDir = join(dir, 'backend');
  const db = await openDatabase({ dataDir });
  await seedPets(db, pets);
  await db.destroy();
  const backend = spawnTs('backend/src/main.ts', [], { BACKEND_PORT: '0', DATA_DIR: dataDir });
  processes.push(backend);
  const [, url] = await backend.waitFor(/listening on (\S+)/);
  return { url: url!, pid: backend.child.pid! };
}
