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
  // Several replicas share one store (PostgreSQL): the failed sign-in counters and the cookie
  // secret move into it; the expiry columns get indexes for the purge that keeps them bounded.
  '002_signin_failures_settings': {
    async up(db) {
      await db.schema.createTable('signin_failures', (table) => {
        table.string('scope', 16).notNullable(); // 'account' (by email) or 'ip'
        table.string('subject', 254).notNullable();
        table.integer('failures').notNullable();
        /** The last wait given (ms): the next failure over the free ones doubles it. */
        table.bigInteger('delay_ms').notNullable();
        table.bigInteger('blocked_until').notNullable();
        table.bigInteger('last_failure').notNullable();
        table.primary(['scope', 'subject']);
        table.index(['last_failure'], 'signin_failures_last_failure');
      });
      await db.schema.createTable('settings', (table) => {
        table.string('name', 64).primary();
        table.string('value', 200).notNullable();
      });
      await db.schema.alterTable('sessions', (table) => table.index(['expires_at'], 'sessions_expires_at'));
      await db.schema.alterTable('invites', (table) => table.index(['expires_at'], 'invites_expires_at'));
    },
    async down(db) {
      await db.schema.alterTable('invites', (table) => table.dropIndex(['expires_at'], 'invites_expires_at'));
      await db.schema.alterTable('sessions', (table) => table.dropIndex(['expires_at'], 'sessions_expires_at'));
      await db.schema.dropTable('settings');
      await db.schema.dropTable('signin_failures');
    },
  },
  // The outcome of an action the next page reports (a revocation, after its redirect), kept with
  // the session so that no link can make a page say it: the query string used to carry it.
  '003_session_notice': {
    async up(db) {
      await db.schema.alterTable('sessions', (table) => table.string('notice', 200).nullable());
    },
    async down(db) {
      await db.schema.alterTable('sessions', (table) => table.dropColumn('notice'));
    },
  },
};

export const migrations = inCodeMigrations(all);
