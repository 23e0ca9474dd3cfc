import type { Context, Middleware, Next } from 'koa';
import type { Knex } from 'knex';
import { ApiError, ErrorCode } from '../http/errors.ts';
import { rawBody } from '../http/json-body.ts';
import { useDb } from '../http/request-db.ts';
import { REPLAYED_HEADER, readKeyedRequest, type KeyedRequest } from './idempotency-key.ts';
import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from './idempotency-store.ts';
import type { InFlightKeys } from './in-flight.ts';

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Seconds a client should wait before repeating a request whose first attempt still runs. */
const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/**
 * Response headers a replay must carry, spelt as the first answer spells them; the rest (Date,
 * Content-Length…) are per response. Records keep them by lower-case name.
 */
const REPLAYED_HEADERS = ['Content-Type', 'Location', 'Link', 'X-API-Stability'];

export interface IdempotencyOptions {
  db: Knex;
  store: IdempotencyStore;
  inFlight: InFlightKeys;
  /** Epoch milliseconds. */
  now: () => number;
  ttlMs?: number;
}

const inProgress = () =>
  new ApiError(409, ErrorCode.idempotencyKeyInProgress, 'A request with this Idempotency-Key is still being processed; retry after Retry-After seconds.');

function capture(ctx: Context): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = ctx.response.get(name);
    if (value) headers[name.toLowerCase()] = value;
  }
  const body = ctx.body === undefined || ctx.body === null ? '' : typeof ctx.body === 'string' ? ctx.body : JSON.stringify(ctx.body);
  return { status: ctx.status, headers, body };
}

function replay(ctx: Context, response: StoredResponse): void {
  ctx.status = response.status;
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers[name.toLowerCase()];
    if (value !== undefined) ctx.set(name, value);
  }
  ctx.set(REPLAYED_HEADER, 'true');
  ctx.body = response.body;
}

/** A stored outcome to replay for `request`: its response, or 422 when the key was used for another request. */
function outcomeOf(record: IdempotencyRecord, request: KeyedRequest): StoredResponse {
  if (record.fingerprint !== request.fingerprint) {
    throw new ApiError(
      422,
      ErrorCode.idempotencyKeyReused,
      'This Idempotency-Key was already used for a different request (method, path or body); use a new key.',
    );
  }
  return record.response;
}

/**
 * Idempotency-Key on a write (IETF draft-ietf-httpapi-idempotency-key-header, as Stripe does it).
 * Without the header the request runs as usual. With it, the first request runs inside a
 * transaction that also stores its outcome: the handler's writes sit in a savepoint, so a 4xx
 * rolls them back while its record still commits; a 5xx or a crash rolls back both, and the key
 * stays free. A repeat with the same fingerprint replays the stored response; with another, 422;
 * while the first still runs, 409 with Retry-After.
 *
 * Sits after body parsing (the fingerprint covers the body's bytes): requests refused before it
 * (malformed body, 413, 415) ran nothing and record nothing.
 */
export function idempotency({ db, store, inFlight, now, ttlMs = IDEMPOTENCY_TTL_MS }: IdempotencyOptions): Middleware {
  return async (ctx: Context, next: Next) => {
    const request = readKeyedRequest(ctx, rawBody(ctx));
    if (!request) return next() as Promise<void>;
    // A finished request's repeats are answered from its record without claiming the key, so
    // that repeats sent at once all get it (a claim is only for running the request).
    const finished = await store.find(db, request, now());
    if (finished) {
      replay(ctx, outcomeOf(finished, request));
      return;
    }
    const release = inFlight.claimLocal(request);
    if (!release) {
      ctx.set('Retry-After', String(IN_PROGRESS_RETRY_AFTER_SECONDS));
      throw inProgress();
    }
    try {
      const { response, replayed } = await db.transaction((trx) => runOnce(ctx, next, trx, request));
      if (replayed) replay(ctx, response);
    } finally {
      release();
      useDb(ctx, db);
    }
  };

  async function runOnce(
    ctx: Context,
    next: Next,
    trx: Knex.Transaction,
    request: KeyedRequest,
  ): Promise<{ response: StoredResponse; replayed: boolean }> {
    if (!(await inFlight.claimShared(trx, request))) {
      ctx.set('Retry-After', String(IN_PROGRESS_RETRY_AFTER_SECONDS));
      throw inProgress();
    }
    const startedAt = now();
    // finished between the look-up before the claim and the claim
    const existing = await store.find(trx, request, startedAt);
    if (existing) return { response: outcomeOf(existing, request), replayed: true };
    try {
      await trx.transaction(async (savepoint) => {
        useDb(ctx, savepoint);
        await next();
      });
    } catch (error) {
      // A 4xx is an outcome like a 2xx: recorded, with the handler's writes rolled back.
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      ctx.status = error.status;
      ctx.body = error.toBody();
    }
    const response = capture(ctx);
    if (response.status >= 500) throw new Error(`handler answered ${response.status} without throwing`);
    await store.save(trx, { ...request, response }, startedAt, startedAt + ttlMs);
    return { response, replayed: false };
  }
}
