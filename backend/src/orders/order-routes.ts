import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { jsonBody, requireJsonBody } from '../http/json-body.ts';
import { pageRenderer, publicPath, sendPage } from '../http/pagination.ts';
import { IdParam } from '../http/params.ts';
import { requestDb } from '../http/request-db.ts';
import { parseWith } from '../http/validation.ts';
import { NewOrderStruct, ORDER_ACTIONS, OrderStatusStruct, type OrderAction } from './order.ts';
import type { OrderService } from './order-service.ts';

/** The store-orders area is experimental: every response says so in this header. */
const STABILITY_HEADER = 'X-API-Stability';

const AREA = '/store/orders';

/** Registers the store-orders operations on `router`. `writeGuards` run before a write's handler (Idempotency-Key). */
export function orderRoutes(router: Router, orders: OrderService, writeGuards: Middleware[] = []): void {
  const renderPage = pageRenderer(OrderStatusStruct, (query) => orders.list(query));

  router.use(AREA, async (ctx, next) => {
    ctx.set(STABILITY_HEADER, 'experimental');
    await next();
  });

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
