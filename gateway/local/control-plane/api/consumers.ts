import type Router from '@koa/router';
import type { EntityService } from '../db/entity-service.ts';

/**
 * kong/api/routes/consumers.lua: `GET /consumers?custom_id=` selects by custom_id (unique), which
 * is how go-kong's GetByCustomID finds a consumer; without the argument the generic page answers.
 */
export function mountConsumerRoutes(router: Router, service: EntityService): void {
  router.get('/consumers', async (ctx, next) => {
    const customId = ctx.query.custom_id;
    if (customId === undefined) {
      await next();
      return;
    }
    if (typeof customId !== 'string' || customId === '') {
      ctx.status = 400;
      ctx.body = { message: 'custom_id must be an unempty string' };
      return;
    }
    const consumer = service.list('consumers').find((c) => c.custom_id === customId);
    ctx.body = { data: consumer ? [service.present('consumers', consumer)] : [], next: null };
  });
}
