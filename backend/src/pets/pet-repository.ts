import type { Knex } from 'knex';
import type { ListQuery } from '../http/pagination.ts';
import type { Pet, PetStatus } from './pet.ts';

interface PetRow {
  id: number | string;
  name: string;
  category_id: number | string;
  status: PetStatus;
}

// PostgreSQL returns int8 columns as strings; ids stay within Number.MAX_SAFE_INTEGER by validation.
const toPet = (row: PetRow): Pet => ({
  id: Number(row.id),
  name: row.name,
  categoryId: Number(row.category_id),
  status: row.status,
});

type TransactionHandle = { parentTransaction?: TransactionHandle; executionPromise?: Promise<unknown> };

/**
 * Pets in the store. Every write announces itself to `onChange` listeners (the page cache), once
 * when it runs and again when its outermost transaction has committed or rolled back, so callers,
 * orders included, never deal with caching. Writes take the database to run on (`db`, a
 * transaction when the caller has one).
 */
export class PetRepository {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly db: Knex) {}

  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  private changed(db: Knex): void {
    for (const listener of this.listeners) listener();
    if (!db.isTransaction) return;
    let outermost = db as unknown as TransactionHandle;
    while (outermost.parentTransaction) outermost = outermost.parentTransaction;
    outermost.executionPromise?.then(
      () => this.changed(this.db),
      () => this.changed(this.db),
    );
  }

  async create(input: { name: string; categoryId: number; status: PetStatus }, db: Knex = this.db): Promise<Pet> {
    const [row] = await db<PetRow>('pets')
      .insert({ name: input.name, category_id: input.categoryId, status: input.status })
      .returning(['id', 'name', 'category_id', 'status']);
    this.changed(db);
    return toPet(row as PetRow);
  }

  async find(id: number, db: Knex = this.db): Promise<Pet | undefined> {
    const row = await db<PetRow>('pets').where({ id }).first();
    return row ? toPet(row) : undefined;
  }

  /** Keyset page: cost depends on the page size, not on how deep the page is. */
  async list({ status, afterId, take }: ListQuery<PetStatus>): Promise<Pet[]> {
    const query = this.db<PetRow>('pets').orderBy('id', 'asc').limit(take);
    if (status) query.where('status', status);
    if (afterId !== undefined) query.where('id', '>', afterId);
    return (await query).map(toPet);
  }

  /** Moves a pet from one status to another only if it is still in `from`; true when it moved. */
  async transition(db: Knex, id: number, from: PetStatus | readonly PetStatus[], to: PetStatus): Promise<boolean> {
    const froms = Array.isArray(from) ? from : [from];
    const changed = await db('pets').where({ id }).whereIn('status', froms).update({ status: to });
    if (changed === 1) this.changed(db);
    return changed === 1;
  }

  async setStatus(db: Knex, id: number, status: PetStatus): Promise<void> {
    await db('pets').where({ id }).update({ status });
    this.changed(db);
  }
}
