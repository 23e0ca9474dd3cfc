import type Router from '@koa/router';
import { object, optional, string } from 'superstruct';
import { jsonBody, requireJsonBody } from '../http/json-body.ts';
import { decodeCursor, nextLink, publicPath, sendPage, toPage } from '../http/pagination.ts';
import { IdParam, PAGE_LIMIT, PageLimitParam } from '../http/params.ts';
import { parseWith } from '../http/validation.ts';
import { NewOrderStruct, ORDER_ACTIONS, OrderStatusStruct, type OrderAction } from './order.ts';
import type { OrderService } from './order-service.ts';

/** The store-orders area is experimental: every response says so in this header. */
export const STABILITY_HEADER = 'X-API-Stability';

const ListOrdersQuery = object({
  limit: optional(PageLimitParam),
  status: optional(OrderStatusStruct),
  cursor: optional(string()),
});

const AREA = '/store/orders';

/** Registers the store-orders operations on `router`. */
export function orderRoutes(router: Router, orders: OrderService): void {
  router.use(AREA, async (ctx, next) => {
    ctx.set(STABILITY_HEADER, 'experimental');
    await next();
  });

  router.get(AREA, async (ctx) => {
    const query = parseWith(ListOrdersQuery, { ...ctx.query }, 'query');
    const limit = query.limit ?? PAGE_LIMIT.default;
    const afterId = decodeCursor(query.cursor);
    const page = toPage(await orders.list({ status: query.status, afterId, take: limit + 1 }), limit);
    sendPage(ctx, { json: JSON.stringify(page.items), link: nextLink(ctx, page, { limit, status: query.status }) });
  });

  router.post(AREA, requireJsonBody, async (ctx) => {
    const { petId } = parseWith(NewOrderStruct, jsonBody(ctx), 'order');
    const order = await orders.place(petId);
    ctx.status = 201;
    ctx.set('Location', publicPath(ctx, `/store/orders/${order.id}`));
    ctx.body = order;
  });

  router.get(`${AREA}/:orderId`, async (ctx) => {
    ctx.body = await orders.find(parseWith(IdParam, ctx.params.orderId, 'orderId'));
  });

  for (const action of Object.keys(ORDER_ACTIONS) as OrderAction[]) {
    router.post(`${AREA}/:orderId/${action}`, async (ctx) => {
      ctx.body = await orders.apply(parseWith(IdParam, ctx.params.orderId, 'orderId'), action);
    });
  }

}
