import type Router from '@koa/router';
import { NotFound, SchemaViolation } from '../schema/errors.ts';
import { paginate } from './listing.ts';

/**
 * Entity types of Kong OSS 3.9 that decK reads and the local gateway does not run: their lists
 * answer empty (the gateway holds none), a lookup 404, and a write is refused naming the type.
 */
export const NOT_RUN = ['certificates', 'ca_certificates', 'snis', 'upstreams', 'vaults', 'keys', 'key-sets', 'basic-auths', 'hmac-auths', 'jwts', 'oauth2'] as const;

export function mountUnsupportedRoutes(router: Router): void {
  // Kong OSS 3.9 entities the local gateway does not run: none held, none accepted.
  for (const type of NOT_RUN) {
    router.get(`/${type}`, (ctx) => {
      ctx.body = paginate([], ctx.query, `/${type}`);
    });
    router.get(`/${type}/:id`, () => {
      throw new NotFound();
    });
    const refuse = () => {
      throw new SchemaViolation({ '@entity': `${type}: not supported by the local gateway (it runs services, routes, consumers, key-auth credentials, ACLs and plugins)` });
    };
    router.post(`/${type}`, refuse);
    router.put(`/${type}/:id`, refuse);
    router.patch(`/${type}/:id`, refuse);
  }
  router.all(['/filter-chains', '/filter-chains/:id'], (ctx) => {
    // kong/api/routes/filter_chains.lua with wasm off (Kong's default)
    ctx.status = 400;
    ctx.body = { message: 'this endpoint is only available when wasm is enabled' };
  });

}
