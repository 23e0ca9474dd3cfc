import type { Knex } from 'knex';
import type { ListQuery } from '../http/pagination.ts';
import type { Order, OrderStatus } from './order.ts';

interface OrderRow {
  id: number | string;
  pet_id: number | string;
  status: OrderStatus;
  created_at: string;
  updated_at: string;
}

const COLUMNS = ['id', 'pet_id', 'status', 'created_at', 'updated_at'] as const;

// PostgreSQL returns int8 columns as strings; ids stay within Number.MAX_SAFE_INTEGER by validation.
const toOrder = (row: OrderRow): Order => ({
  id: Number(row.id),
  petId: Number(row.pet_id),
  status: row.status,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Orders in the store. Writes take the database to run on (`db`, a transaction when the caller has one). */
export class OrderRepository {
  constructor(private readonly db: Knex) {}

  async insert(db: Knex, petId: number, at: string): Promise<Order> {
    const [row] = await db<OrderRow>('orders')
      .insert({ pet_id: petId, status: 'placed', created_at: at, updated_at: at })
      .returning([...COLUMNS]);
    return toOrder(row as OrderRow);
  }

  async find(id: number, db: Knex = this.db): Promise<Order | undefined> {
    const row = await db<OrderRow>('orders').where({ id }).first();
    return row ? toOrder(row) : undefined;
  }

  /** Keyset page: cost depends on the page size, not on how deep the page is. */
  async list({ status, afterId, take }: ListQuery<OrderStatus>): Promise<Order[]> {
    const query = this.db<OrderRow>('orders').orderBy('id', 'asc').limit(take);
    if (status) query.where('status', status);
    if (afterId !== undefined) query.where('id', '>', afterId);
    return (await query).map(toOrder);
  }

  /** Moves an order to `to` only if its status is still one of `from`; true when it moved. */
  async transition(db: Knex, id: number, from: readonly OrderStatus[], to: OrderStatus, at: string): Promise<boolean> {
    const changed = await db('orders').where({ id }).whereIn('status', from).update({ status: to, updated_at: at });
    return changed === 1;
  }
}
