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
};

export const migrations = inCodeMigrations(all);
