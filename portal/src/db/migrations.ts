import type { Knex } from 'knex';
import { inCodeMigrations } from '../../../packages/node-runtime/migrations.js';

/** As the backend's (backend/src/db/migrations.ts): in code, append only. */
const all: Record<string, Knex.Migration> = {
  '001_accounts_sessions_invites': {
    async up(db) {
      await db.schema.createTable('accounts', (table) => {
        table.string('id', 36).primary();
        table.string('email', 254).notNullable().unique();
        table.string('name', 100).notNullable();
        table.string('password_hash', 200).notNullable();
        // the Kong consumer (username) made for the account; null until the gateway answered
        table.string('consumer', 64).nullable();
        table.bigInteger('created_at').notNullable();
      });
      await db.schema.createTable('sessions', (table) => {
        // SHA-256 of the cookie's opaque id: a leaked table opens no session
        table.string('id_hash', 64).primary();
        table.string('account_id', 36).notNullable().references('id').inTable('accounts').onDelete('CASCADE');
        table.bigInteger('expires_at').notNullable();
        table.index(['account_id'], 'sessions_account_id');
      });
      await db.schema.createTable('invites', (table) => {
        table.string('token_hash', 64).primary();
        table.string('email', 254).notNullable();
        table.bigInteger('expires_at').notNullable();
        table.bigInteger('used_at').nullable();
      });
    },
    async down(db) {
      await db.schema.dropTable('invites');
      await db.schema.dropTable('sessions');
      await db.schema.dropTable('accounts');
    },
  },
};

export const migrations = inCodeMigrations(all);
