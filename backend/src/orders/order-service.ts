import type { Knex } from 'knex';
import { ApiError, ErrorCode } from '../http/errors.ts';
import type { PetRepository } from '../pets/pet-repository.ts';
import type { ListQuery } from '../http/pagination.ts';
import { ORDER_ACTIONS, type Order, type OrderAction, type OrderStatus } from './order.ts';
import type { OrderRepository } from './order-repository.ts';

export type Clock = () => Date;

/**
 * Orders and their effect on pets. Every check-and-set runs in one transaction with a conditional
 * UPDATE, so concurrent orders for one pet cannot both succeed. `db` is where the transaction
 * opens: the app's database, or a transaction of the caller's (it then nests as a savepoint).
 */
export class OrderService {
  constructor(
    private readonly orders: OrderRepository,
    private readonly pets: PetRepository,
    private readonly clock: Clock = () => new Date(),
  ) {}

  async place(db: Knex, petId: number): Promise<Order> {
    return db.transaction(async (trx) => {
      if (!(await this.pets.transition(trx, petId, 'available', 'pending'))) {
        throw (await this.pets.find(petId, trx))
          ? new ApiError(409, ErrorCode.petNotAvailable, `Pet ${petId} is not available.`)
          : new ApiError(404, ErrorCode.petNotFound, `Pet ${petId} was not found.`);
      }
      return this.orders.insert(trx, petId, this.clock().toISOString());
    });
  }

  async find(id: number): Promise<Order> {
    const order = await this.orders.find(id);
    if (!order) throw new ApiError(404, ErrorCode.orderNotFound, `Order ${id} was not found.`);
    return order;
  }

  list(query: ListQuery<OrderStatus>): Promise<Order[]> {
    return this.orders.list(query);
  }

  async apply(db: Knex, id: number, action: OrderAction): Promise<Order> {
    const { to, from, petBecomes } = ORDER_ACTIONS[action];
    return db.transaction(async (trx) => {
      const order = await this.orders.find(id, trx);
      if (!order) throw new ApiError(404, ErrorCode.orderNotFound, `Order ${id} was not found.`);
      const now = this.clock().toISOString();
      if (!(await this.orders.transition(trx, id, from, to, now))) {
        throw new ApiError(409, ErrorCode.invalidOrderTransition, `Order ${id} is ${order.status}; it cannot ${action}.`);
      }
      if (petBecomes) await this.pets.setStatus(trx, order.petId, petBecomes);
      return { ...order, status: to, updatedAt: now };
    });
  }
}
