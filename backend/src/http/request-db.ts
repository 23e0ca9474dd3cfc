import type { Context, Middleware } from 'koa';
import type { Knex } from 'knex';

/**
 * Every request gets the database it must write through: the app's, or the transaction an
 * Idempotency-Key opened around the handler (so the record commits with the write).
 */
export function bindDb(db: Knex): Middleware {
  return (ctx, next) => {
    ctx.state.db = db;
    return next();
  };
}

export function requestDb(ctx: Context): Knex {
  return ctx.state.db as Knex;
}

export function useDb(ctx: Context, db: Knex): void {
  ctx.state.db = db;
}
