import type { Knex } from 'knex';
import { PageCache } from './page-cache.ts';
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

export interface PetQuery {
  status?: PetStatus;
  afterId?: number;
  /** Rows to fetch (callers ask for one more than a page to learn whether another exists). */
  take: number;
}

export class PetRepository {
  /** @param pages rendered list pages to drop whenever a pet changes */
  constructor(
    private readonly db: Knex,
    private readonly pages?: PageCache<unknown>,
  ) {}

  async create(input: { name: string; categoryId: number; status: PetStatus }): Promise<Pet> {
    try {
      const [row] = await this.db<PetRow>('pets')
        .insert({ name: input.name, category_id: input.categoryId, status: input.status })
        .returning(['id', 'name', 'category_id', 'status']);
      return toPet(row as PetRow);
    } finally {
      this.pagesChanged();
    }
  }

  /** Call after any write to pets, including inside transactions (again after they end). */
  pagesChanged(): void {
    this.pages?.invalidate();
  }

  async find(id: number, trx: Knex = this.db): Promise<Pet | undefined> {
    const row = await trx<PetRow>('pets').where({ id }).first();
    return row ? toPet(row) : undefined;
  }

  /** Keyset page: cost depends on the page size, not on how deep the page is. */
  async list({ status, afterId, take }: PetQuery): Promise<Pet[]> {
    const query = this.db<PetRow>('pets').orderBy('id', 'asc').limit(take);
    if (status) query.where('status', status);
    if (afterId !== undefined) query.where('id', '>', afterId);
    return (await query).map(toPet);
  }

  /** Moves a pet from one status to another only if it is still in `from`; true when it moved. */
  async transition(trx: Knex, id: number, from: PetStatus | readonly PetStatus[], to: PetStatus): Promise<boolean> {
    const froms = Array.isArray(from) ? from : [from];
    const changed = await trx('pets').where({ id }).whereIn('status', froms).update({ status: to });
    if (changed === 1) this.pagesChanged();
    return changed === 1;
  }

  async setStatus(trx: Knex, id: number, status: PetStatus): Promise<void> {
    await trx('pets').where({ id }).update({ status });
    this.pagesChanged();
  }
}
