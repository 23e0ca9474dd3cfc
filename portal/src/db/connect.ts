import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { migrations } from './migrations.ts';
import { migrateToLatest } from '../../../packages/node-runtime/migrations.js';
import { sqliteConfig } from '../../../packages/node-runtime/sqlite.js';

export interface PortalStoreOptions {
  /** Directory of the SQLite file (portal.sqlite); ignored when `url` is set. */
  dataDir: string;
  /** `postgres://…` (checked by readStoreSettings): one store for several replicas. */
  databaseUrl?: string;
}

function storeConfig(options: PortalStoreOptions): Knex.Config {
  if (options.databaseUrl !== undefined) return { client: 'pg', connection: options.databaseUrl, pool: { min: 1, max: 10 } };
  mkdirSync(options.dataDir, { recursive: true });
  return sqliteConfig(join(options.dataDir, 'portal.sqlite'));
}

/** The portal's store, PostgreSQL (databaseUrl) or its own SQLite file in dataDir, its schema brought up to date. */
export async function openPortalDatabase(options: PortalStoreOptions): Promise<Knex> {
  const db = knex(storeConfig(options));
  try {
    // its own migrations table: the portal may share DATA_DIR with the backend, never its tables;
    // replicas starting together take turns (migrateToLatest)
    await migrateToLatest(db, { migrationSource: migrations, tableName: 'portal_migrations' });
    return db;
  } catch (error) {
    await db.destroy();
    throw error;
  }
}
