import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { jsonBody, requireJsonBody } from '../http/json-body.ts';
import { pageRenderer, sendPage } from '../http/pagination.ts';
import { IdParam } from '../http/params.ts';
import { publicPath } from '../http/public-path.ts';
import { requestDb } from '../http/request-db.ts';
import { parseWith } from '../http/validation.ts';
import { NewOrderStruct, ORDER_ACTIONS, OrderStatusStruct, type OrderAction } from './order.ts';
import type { OrderService } from './order-service.ts';

const AREA = '/store/orders';

/**
 * The headers of every response at `path`: the store-orders area is experimental, and each of its
 * responses says so, its errors (404, 405, 400…) included.
 */
export function areaHeaders(path: string): Record<string, string> {
  return path === AREA || path.startsWith(`${AREA}/`) ? { 'X-API-Stability': 'experimental' } : {};
}

/** Sets areaHeaders on every response, before any route or error handler runs. */
export const stabilityHeaders: Middleware = async (ctx, next) => {
  ctx.set(areaHeaders(ctx.path));
  await next();
};

/** Registers the store-orders operations on `router`. `writeGuards` run before a write's handler (Idempotency-Key). */
export function orderRoutes(router: Router, orders: OrderService, writeGuards: Middleware[] = []): void {
  const renderPage = pageRenderer(OrderStatusStruct, (query) => orders.list(query));

  router.get(AREA, async (ctx) => {
    sendPage(ctx, await renderPage(ctx));
  });

  router.post(AREA, requireJsonBody, ...writeGuards, async (ctx) => {
    const { petId } = parseWith(NewOrderStruct, jsonBody(ctx), 'order');
    const order = await orders.place(requestDb(ctx), petId);
    ctx.status = 201;
    ctx.set('Location', publicPath(ctx, `/store/orders/${order.id}`));
    ctx.body = order;
  });

  router.get(`${AREA}/:orderId`, async (ctx) => {
    ctx.body = await orders.find(parseWith(IdParam, ctx.params.orderId, 'orderId'));
  });

  for (const action of Object.keys(ORDER_ACTIONS) as OrderAction[]) {
    router.post(`${AREA}/:orderId/${action}`, ...writeGuards, async (ctx) => {
      ctx.body = await orders.apply(requestDb(ctx), parseWith(IdParam, ctx.params.orderId, 'orderId'), action);
    });
  }
}
