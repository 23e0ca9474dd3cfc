import type { Knex } from 'knex';
import { inCodeMigrations } from '../../../packages/node-runtime/migrations.js';

/**
 * Migrations live in code (not a directory scan) so they run the same under tsx, in tests and in
 * a built image. Append only; never edit one that has shipped.
 */
const all: Record<string, Knex.Migration> = {
  '001_pets_and_orders': {
    async up(db) {
      await db.schema.createTable('pets', (table) => {
        table.bigIncrements('id').primary();
        table.string('name', 200).notNullable();
        table.bigInteger('category_id').notNullable();
        table.string('status', 16).notNullable();
        table.index(['status', 'id'], 'pets_status_id');
      });
      await db.schema.createTable('orders', (table) => {
        table.bigIncrements('id').primary();
        table.bigInteger('pet_id').notNullable().references('id').inTable('pets');
        table.string('status', 16).notNullable();
        table.string('created_at', 32).notNullable();
        table.string('updated_at', 32).notNullable();
        table.index(['status', 'id'], 'orders_status_id');
        table.index(['pet_id'], 'orders_pet_id');
      });
    },
    async down(db) {
      await db.schema.dropTable('orders');
      await db.schema.dropTable('pets');
    },
  },
  '002_idempotency_keys': {
    async up(db) {
      await db.schema.createTable('idempotency_keys', (table) => {
        table.bigIncrements('id').primary();
        table.string('scope', 255).notNullable();
        table.string('key', 255).notNullable();
        table.string('fingerprint', 64).notNullable();
        table.integer('status').notNullable();
        table.text('headers').notNullable();
        table.text('body').notNullable();
        table.bigInteger('expires_at').notNullable();
        table.unique(['scope', 'key'], { indexName: 'idempotency_keys_scope_key' });
        table.index(['expires_at'], 'idempotency_keys_expires_at');
      });
    },
    async down(db) {
      await db.schema.dropTable('idempotency_keys');
    },
  },
  // PostgreSQL's bigserial runs to 2^63-1, but the API's ids are JSON integers a double keeps
  // exactly (the contract's Id schema: at most 2^53-1); past it node-postgres would hand out
  // rounded ids, two rows under one. Past it now, an insert fails (a 500, logged) instead.
  '003_ids_within_json_integers': {
    async up(db) {
      if ((db.client as Knex.Client).config.client !== 'pg') return;
      for (const table of ['pets', 'orders']) await db.raw(`ALTER SEQUENCE ${table}_id_seq MAXVALUE ${Number.MAX_SAFE_INTEGER}`);
    },
    async down(db) {
      if ((db.client as Knex.Client).config.client !== 'pg') return;
      for (const table of ['pets', 'orders']) await db.raw(`ALTER SEQUENCE ${table}_id_seq NO MAXVALUE`);
    },
  },
};

export const migrations = inCodeMigrations(all);
