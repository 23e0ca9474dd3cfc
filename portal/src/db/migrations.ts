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
  // Emails were compared trimmed and lower-cased only, so "zoë" typed composed and decomposed made
  // two accounts. They are normalised now (accounts.ts, normalizeEmail; its rule copied here, so that
  // this migration does what it did when it was written). Two accounts whose addresses become one
  // are not merged: both rows stay as they are, and the start says which, for an admin to settle.
  '004_normalized_emails': {
    async up(db) {
      const normalize = (email: string) => email.trim().normalize('NFKC').toLowerCase().normalize('NFKC');
      const accounts = await db('accounts').select<{ id: string; email: string }[]>('id', 'email');
      const byEmail = new Map<string, { id: string; email: string }[]>();
      for (const row of accounts) byEmail.set(normalize(row.email), [...(byEmail.get(normalize(row.email)) ?? []), row]);
      for (const [email, rows] of byEmail) {
        if (rows.length > 1) {
          console.warn(
            `[portal] migration 004: accounts ${rows.map((row) => row.id).join(', ')} have emails that are one address once normalised; ` +
              'left as they are (those not stored normalised cannot sign in): delete or change all but one',
          );
        } else if (rows[0]!.email !== email) {
          await db('accounts').where({ id: rows[0]!.id }).update({ email });
        }
      }
      for (const row of await db('invites').select<{ token_hash: string; email: string }[]>('token_hash', 'email')) {
        if (normalize(row.email) !== row.email) await db('invites').where({ token_hash: row.token_hash }).update({ email: normalize(row.email) });
      }
      // a counter whose address is counted under its normalised form already is dropped: it is forgotten within the hour anyway
      const counters = await db('signin_failures').where({ scope: 'account' }).select<{ subject: string }[]>('subject');
      const subjects = new Set(counters.map((row) => row.subject));
      for (const { subject } of counters) {
        const normalized = normalize(subject);
        if (normalized === subject) continue;
        const counter = db('signin_failures').where({ scope: 'account', subject });
        if (subjects.has(normalized)) await counter.delete();
        else await counter.update({ subject: normalized });
        subjects.add(normalized);
      }
    },
    async down() {
      // the addresses as they were typed are not kept: normalised ones work as before
    },
  },
};

export const migrations = inCodeMigrations(all);
