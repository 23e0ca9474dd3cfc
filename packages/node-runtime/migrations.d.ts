import type { Knex } from 'knex';

/** A knex migration source over migrations kept in code, applied in the order of their names. */
export function inCodeMigrations(all: Record<string, Knex.Migration>): Knex.MigrationSource<string>;
