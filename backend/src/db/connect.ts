import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { migrations } from './migrations.ts';
import { migrateToLatest } from '../../../packages/node-runtime/migrations.js';
import { sqliteConfig } from '../../../packages/node-runtime/sqlite.js';

export interface DatabaseOptions {
  /** Directory of the SQLite file (default ./data). Ignored when `url` is set. */
  dataDir: string;
  /** `postgres://…` (checked by readBackendConfig) for deployments with several backend replicas; unset for SQLite. */
  url?: string;
}

function sqliteFileConfig(dataDir: string): Knex.Config {
  mkdirSync(dataDir, { recursive: true });
  return sqliteConfig(join(dataDir, 'animal-store.sqlite'));
}

/**
 * Bounded waits, shorter than the gateway's read_timeout (15 s, kong.yml): a database that does
 * not answer (a partition, a frozen server) fails a request with 503 instead of holding it.
 */
const CONNECT_TIMEOUT_MS = 5_000;
const QUERY_TIMEOUT_MS = 10_000;

function postgresConfig(url: string): Knex.Config {
  return {
    client: 'pg',
    connection: { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: QUERY_TIMEOUT_MS },
    acquireConnectionTimeout: QUERY_TIMEOUT_MS,
    pool: { min: 1, max: 10 },
  };
}

/** Opens the store and brings its schema up to date. */
export async function openDatabase(options: DatabaseOptions): Promise<Knex> {
  const db = knex(options.url !== undefined ? postgresConfig(options.url) : sqliteFileConfig(options.dataDir));
  try {
    // replicas starting together on one PostgreSQL database take turns (migrateToLatest)
    await migrateToLatest(db, { migrationSource: migrations });
    return db;
  } catch (error) {
    await db.destroy();
    throw error;
  }
}
