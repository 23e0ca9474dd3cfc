import type { Knex } from 'knex';

/** A knex migration source over migrations kept in code, applied in the order of their names. */
export function inCodeMigrations(all: Record<string, Knex.Migration>): Knex.MigrationSource<string>;

/**
 * knex's `migrate.latest`; on PostgreSQL, runs of several processes at once take turns (an advisory
 * lock), and a migration lock table a past race left with two rows, or locked by a crashed run, is
 * put right first.
 */
export function migrateToLatest(db: Knex, config: Knex.MigratorConfig): Promise<void>;
