import type { Knex } from 'knex';
import { ApiError, ErrorCode } from '../http/errors.ts';
import type { PetRepository } from '../pets/pet-repository.ts';
import { ORDER_ACTIONS, type Order, type OrderAction, type OrderStatus } from './order.ts';

interface OrderRow {
  id: number | string;
  pet_id: number | string;
  status: OrderStatus;
  created_at: string;
  updated_at: string;
}

const toOrder = (row: OrderRow): Order => ({
  id: Number(row.id),
  petId: Number(row.pet_id),
  status: row.status,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export type Clock = () => Date;

/**
 * Orders and their effect on pets. Every check-and-set runs in one transaction with a conditional
 * UPDATE, so concurrent orders for one pet cannot both succeed.
 */
export class OrderService {
  constructor(
    private readonly db: Knex,
    private readonly pets: PetRepository,
    private readonly clock: Clock = () => new Date(),
  ) {}

  /** Runs `work` in a transaction; pet pages are invalidated again once it has committed or failed. */
  private async inTransaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(work);
    } finally {
      this.pets.pagesChanged();
    }
  }

  async place(petId: number): Promise<Order> {
    return this.inTransaction(async (trx) => {
      if (!(await this.pets.transition(trx, petId, 'available', 'pending'))) {
        throw (await this.pets.find(petId, trx))
          ? new ApiError(409, ErrorCode.petNotAvailable, `Pet ${petId} is not available.`)
          : new ApiError(404, ErrorCode.petNotFound, `Pet ${petId} was not found.`);
      }
      const now = this.clock().toISOString();
      const [row] = await trx<OrderRow>('orders')
        .insert({ pet_id: petId, status: 'placed', created_at: now, updated_at: now })
        .returning(['id', 'pet_id', 'status', 'created_at', 'updated_at']);
      return toOrder(row as OrderRow);
    });
  }

  async find(id: number): Promise<Order> {
    const row = await this.db<OrderRow>('orders').where({ id }).first();
    if (!row) throw new ApiError(404, ErrorCode.orderNotFound, `Order ${id} was not found.`);
    return toOrder(row);
  }

  async list({ status, afterId, take }: { status?: OrderStatus; afterId?: number; take: number }): Promise<Order[]> {
    const query = this.db<OrderRow>('orders').orderBy('id', 'asc').limit(take);
    if (status) query.where('status', status);
    if (afterId !== undefined) query.where('id', '>', afterId);
    return (await query).map(toOrder);
  }

  async apply(id: number, action: OrderAction): Promise<Order> {
    const { to, from, petBecomes } = ORDER_ACTIONS[action];
    return this.inTransaction(async (trx) => {
      const row = await trx<OrderRow>('orders').where({ id }).first();
      if (!row) throw new ApiError(404, ErrorCode.orderNotFound, `Order ${id} was not found.`);
      const now = this.clock().toISOString();
      const changed = await trx('orders')
        .where({ id })
        .whereIn('status', from)
        .update({ status: to, updated_at: now });
      if (changed !== 1) {
        throw new ApiError(409, ErrorCode.invalidOrderTransition, `Order ${id} is ${row.status}; it cannot ${action}.`);
      }
      if (petBecomes) {
        await this.pets.setStatus(trx, Number(row.pet_id), petBecomes);
      }
      return toOrder({ ...row, status: to, updated_at: now });
    });
  }
}
