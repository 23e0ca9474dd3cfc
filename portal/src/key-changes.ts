import type { Knex } from 'knex';

/**
 * One change of an account's keys at a time. A rotation reads the key it replaces, creates the
 * new one, then marks the old one replaced: two at once both read the same old key and leave two
 * new ones that never expire (a double-clicked "Rotate"). So changes of one consumer's keys run
 * in turn: in this process by a chain of promises, and on PostgreSQL (several replicas) also
 * under a transaction-scoped advisory lock, which PostgreSQL releases at commit, rollback or
 * when the holder's connection dies. SQLite has one portal process, so the chain is the whole
 * truth there. An entry lives only while a change of that consumer runs.
 */
export class KeyChanges {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly db: Knex) {}

  async run<T>(consumer: string, change: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(consumer) ?? Promise.resolve();
    const result = previous.then(() => this.acrossReplicas(consumer, change));
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(consumer, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(consumer) === tail) this.tails.delete(consumer);
    }
  }

  private acrossReplicas<T>(consumer: string, change: () => Promise<T>): Promise<T> {
    if ((this.db.client as Knex.Client).config.client !== 'pg') return change();
    return this.db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`portal-keys\n${consumer}`]);
      return change();
    });
  }
}
