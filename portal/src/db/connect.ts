import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { migrations } from './migrations.ts';
import { sqliteConfig } from '../../../packages/node-runtime/sqlite.js';

/** The portal's own SQLite file in `dataDir` (portal.sqlite), its schema brought up to date. */
export async function openPortalDatabase(dataDir: string): Promise<Knex> {
  mkdirSync(dataDir, { recursive: true });
  const db = knex(sqliteConfig(join(dataDir, 'portal.sqlite')));
  // its own migrations table: the portal may share DATA_DIR with the backend, never its tables
  await db.migrate.latest({ migrationSource: migrations, tableName: 'portal_migrations' });
  return db;
}
