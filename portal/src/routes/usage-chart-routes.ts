import type Router from '@koa/router';
import type { Context } from 'koa';
import type { PortalServices } from './services.ts';

function refuse(ctx: Context, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.body = { code, message, status };
}

/**
 * The data of the dashboard's charts (assets/usage-chart.js fetches it): the signed-in account's
 * own consumer only, whose name comes from the session, never from the request.
 */
export function usageChartRoutes(router: Router, services: PortalServices): void {
  router.get('/usage/requests.json', async (ctx) => {
    const consumer = ctx.state.account?.consumer;
    if (!consumer) return refuse(ctx, 401, 'unauthorized', 'Sign in to see your usage.');
    try {
      ctx.body = await services.charts.of(consumer);
    } catch (error) {
      // where the source is and why it failed are for the operator, not the account
      console.error(`[portal] usage charts: ${(error as Error).message}`);
      refuse(ctx, 503, 'usage-unavailable', 'Usage over time cannot be read right now; try again in a minute.');
    }
  });
}
