import type Router from '@koa/router';
import { NotFound } from '../schema/errors.ts';

/**
 * kong/api/routes/snis.lua:6 (3.9.3): `/snis/{snis}/certificate` is endpoints.disable
 * (endpoints.lua:864-868), a `before` that answers 404 Not found ahead of each of the path's
 * methods, OPTIONS included; the path is still routed (listed by /endpoints, POST 405).
 */
export function mountSniRoutes(router: Router): void {
  router.register('/snis/:snis/certificate', ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], () => {
    throw new NotFound();
  });
}
