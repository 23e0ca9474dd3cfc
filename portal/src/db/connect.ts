import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { migrations } from './migrations.ts';
import { sqliteConfig } from '../../../packages/node-runtime/sqlite.js';

export interface PortalStoreOptions {
  /** Directory of the SQLite file (portal.sqlite); ignored when `url` is set. */
  dataDir: string;
  /** `postgres://…` (checked by readStoreSettings): one store for several replicas. */
  databaseUrl?: string;
}

/** Replicas starting together race for knex's migration lock; the losers wait and try again. */
const MIGRATION_TRIES = 20;
const MIGRATION_RETRY_MS = 250;

function storeConfig(options: PortalStoreOptions): Knex.Config {
  if (options.databaseUrl !== undefined) return { client: 'pg', connection: options.databaseUrl, pool: { min: 1, max: 10 } };
  mkdirSync(options.dataDir, { recursive: true });
  return sqliteConfig(join(options.dataDir, 'portal.sqlite'));
}

/** Another replica holds the lock, or created the migration tables between our check and our create. */
const lostMigrationRace = (error: unknown) =>
  (error as Error).name === 'MigrationLocked' || ['23505', '42P07'].includes((error as { code?: string }).code ?? '');

/** The portal's store, PostgreSQL (databaseUrl) or its own SQLite file in dataDir, its schema brought up to date. */
export async function openPortalDatabase(options: PortalStoreOptions): Promise<Knex> {
  const db = knex(storeConfig(options));
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        // its own migrations table: the portal may share DATA_DIR with the backend, never its tables
        await db.migrate.latest({ migrationSource: migrations, tableName: 'portal_migrations' });
        return db;
      } catch (error) {
        if (attempt >= MIGRATION_TRIES || !lostMigrationRace(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, MIGRATION_RETRY_MS));
      }
    }
  } catch (error) {
    await db.destroy();
    throw error;
  }
}
