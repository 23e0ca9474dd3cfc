import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { migrations } from './migrations.ts';

export interface DatabaseOptions {
  /** Directory of the SQLite file (default ./data). Ignored when `url` is set. */
  dataDir: string;
  /** `postgres://…` (checked by readBackendConfig) for deployments with several backend replicas; unset for SQLite. */
  url?: string;
}

function sqliteConfig(dataDir: string): Knex.Config {
  mkdirSync(dataDir, { recursive: true });
  return {
    client: 'sqlite3',
    connection: { filename: join(dataDir, 'animal-store.sqlite') },
    useNullAsDefault: true,
    // One connection: SQLite serialises writers anyway, and one connection makes every
    // transaction's check-and-set exclusive without SQLITE_BUSY retries.
    pool: {
      min: 1,
      max: 1,
      afterCreate(connection: { exec(sql: string, done: (error: Error | null) => void): void }, done: (error: Error | null, connection: unknown) => void) {
        // WAL: readers never block the writer. synchronous=NORMAL in WAL mode keeps every
        // committed transaction across a crash of the process (kill -9); FULL would add
        // durability across power loss at the cost of an fsync per commit.
        connection.exec(
          'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;',
          (error) => done(error, connection),
        );
      },
    },
  };
}

function postgresConfig(url: string): Knex.Config {
  return { client: 'pg', connection: url, pool: { min: 1, max: 10 } };
}

/** Opens the store and brings its schema up to date. */
export async function openDatabase(options: DatabaseOptions): Promise<Knex> {
  const db = knex(options.url !== undefined ? postgresConfig(options.url) : sqliteConfig(options.dataDir));
  await db.migrate.latest({ migrationSource: migrations });
  return db;
}
