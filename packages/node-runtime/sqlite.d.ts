import type { Knex } from 'knex';

/** The settings of every SQLite file of the repository (sqlite.js says why each). */
export function sqliteConfig(filename: string): Knex.Config;
