import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

const SQLITE_FILE = 'portal.sqlite';

function storeConfig(options: PortalStoreOptions): Knex.Config {
  if (options.databaseUrl !== undefined) return { client: 'pg', connection: options.databaseUrl, pool: { min: 1, max: 10 } };
  mkdirSync(options.dataDir, { recursive: true });
  return sqliteConfig(join(options.dataDir, SQLITE_FILE));
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

/** Where a store was looked for and not found, in one line (never the database URL: it carries the password). */
function noStore(options: PortalStoreOptions): Error {
  const where = options.databaseUrl !== undefined ? 'the database of PORTAL_DATABASE_URL (no portal tables)' : `${resolve(options.dataDir)} (no ${SQLITE_FILE})`;
  return new Error(
    `no portal store in ${where}: set PORTAL_DATA_DIR (else DATA_DIR) to the running portal's, or PORTAL_DATABASE_URL to its database`,
  );
}

/**
 * The store a portal made, for what writes to it from outside (the CLI's invitations): never a
 * new one, which no running portal would read. Its schema is the portal's to migrate.
 */
export async function openExistingPortalDatabase(options: PortalStoreOptions): Promise<Knex> {
  if (options.databaseUrl === undefined && !existsSync(join(options.dataDir, SQLITE_FILE))) throw noStore(options);
  const db = knex(storeConfig(options));
  try {
    if (!(await db.schema.hasTable('invites'))) throw noStore(options);
    return db;
  } catch (error) {
    await db.destroy();
    throw error;
  }
}
