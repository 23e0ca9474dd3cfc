import type { Knex } from 'knex';
import type { KeyedRequest } from './idempotency-key.ts';

/** A response as it is replayed: status, the headers that matter, and the body text. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface IdempotencyRecord extends KeyedRequest {
  response: StoredResponse;
}

interface RecordRow {
  scope: string;
  key: string;
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
  expires_at: number | string;
}

const TABLE = 'idempotency_keys';

/** The idempotency records' SQL. Times are epoch milliseconds from the caller's clock. */
export class IdempotencyStore {
  constructor(private readonly db: Knex) {}

  /** The live (unexpired) record of a key, read in the caller's transaction. */
  async find(db: Knex, { scope, key }: { scope: string; key: string }, now: number): Promise<IdempotencyRecord | undefined> {
    const row = await db<RecordRow>(TABLE).where({ scope, key }).andWhere('expires_at', '>', now).first();
    if (!row) return undefined;
    return {
      scope: row.scope,
      key: row.key,
      fingerprint: row.fingerprint,
      response: { status: row.status, headers: JSON.parse(row.headers) as Record<string, string>, body: row.body },
    };
  }

  /** Stores a record in the caller's transaction, replacing an expired one of the same key. */
  async save(db: Knex, record: IdempotencyRecord, now: number, expiresAt: number): Promise<void> {
    await db(TABLE).where({ scope: record.scope, key: record.key }).andWhere('expires_at', '<=', now).delete();
    await db(TABLE).insert({
      scope: record.scope,
      key: record.key,
      fingerprint: record.fingerprint,
      status: record.response.status,
      headers: JSON.stringify(record.response.headers),
      body: record.response.body,
      expires_at: expiresAt,
    });
  }

  /** Deletes up to `limit` expired records; how many it deleted. */
  async deleteExpired(now: number, limit: number): Promise<number> {
    const batch = this.db(TABLE).select('id').where('expires_at', '<=', now).orderBy('expires_at').limit(limit);
    return this.db(TABLE).whereIn('id', batch).delete();
  }
}
