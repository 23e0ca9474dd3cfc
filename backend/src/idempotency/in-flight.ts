import type { Knex } from 'knex';
import type { KeyedRequest } from './idempotency-key.ts';

/**
 * Knows which keys are being run right now, so a repeat gets 409 instead of waiting or running
 * twice. Within the process a set; across PostgreSQL replicas also a transaction-scoped advisory
 * lock, which PostgreSQL releases at commit, rollback or when the holder's connection dies
 * (kill -9 included), so a crash never leaves a key locked. SQLite has one writer process, so
 * the set is the whole truth there.
 */
export class InFlightKeys {
  private readonly running = new Set<string>();

  constructor(private readonly db: Knex) {}

  /** Claims the key in this process; a release function, or undefined when it is already running here. */
  claimLocal({ scope, key }: KeyedRequest): (() => void) | undefined {
    const id = `${scope}\n${key}`;
    if (this.running.has(id)) return undefined;
    this.running.add(id);
    return () => this.running.delete(id);
  }

  /** Claims the key for the rest of `trx` across replicas; false when another replica runs it. */
  async claimShared(trx: Knex.Transaction, { scope, key }: KeyedRequest): Promise<boolean> {
    if (this.db.client.config.client !== 'pg') return true;
    const result = await trx.raw('SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0)) AS claimed', [`idempotency\n${scope}\n${key}`]);
    return (result as { rows: Array<{ claimed: boolean }> }).rows[0]!.claimed;
  }
}
