import { enums, object } from 'superstruct';
import { PositiveId } from '../http/params.ts';
import type { PetStatus } from '../pets/pet.ts';

const ORDER_STATUSES = ['placed', 'approved', 'delivered', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const OrderStatusStruct = enums(ORDER_STATUSES);

export interface Order {
  id: number;
  petId: number;
  status: OrderStatus;
  createdAt: string;
  updatedAt: string;
}

export const NewOrderStruct = object({ petId: PositiveId });

/** The actions exposed as `POST /store/orders/{orderId}/{action}`. */
export const ORDER_ACTIONS = {
  approve: { to: 'approved', from: ['placed'], petBecomes: undefined },
  deliver: { to: 'delivered', from: ['approved'], petBecomes: 'sold' },
  cancel: { to: 'cancelled', from: ['placed', 'approved'], petBecomes: 'available' },
} as const satisfies Record<string, { to: OrderStatus; from: readonly OrderStatus[]; petBecomes: PetStatus | undefined }>;

export type OrderAction = keyof typeof ORDER_ACTIONS;
