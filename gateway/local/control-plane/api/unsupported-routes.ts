import type Router from '@koa/router';
import type { EntityService } from '../db/entity-service.ts';
import { NotFound, SchemaViolation } from '../schema/errors.ts';
import { paginate } from './listing.ts';

/**
 * Entity types of Kong OSS 3.9 that decK reads and the local gateway does not run: their lists
 * answer empty (the gateway holds none), a lookup 404, and a write is refused naming the type.
 */
export const NOT_RUN = ['upstreams', 'vaults', 'keys', 'key-sets', 'basic-auths', 'hmac-auths', 'jwts', 'oauth2'] as const;

/**
 * The credential types among them, by the name of their endpoints under a consumer
 * (kong/plugins/{basic-auth,hmac-auth,jwt,oauth2}/api.lua, 3.9.3).
 */
const NESTED_CREDENTIALS: ReadonlyArray<readonly [(typeof NOT_RUN)[number], string]> = [
  ['basic-auths', 'basic-auth'],
  ['hmac-auths', 'hmac-auth'],
  ['jwts', 'jwt'],
  ['oauth2', 'oauth2'],
];

const refusal = (type: string) => () => {
  throw new SchemaViolation({ '@entity': `${type}: not supported by the local gateway (it runs certificates, SNIs, CA certificates, services, routes, consumers, key-auth credentials, ACLs and plugins)` });
};

export function mountUnsupportedRoutes(router: Router, service: EntityService): void {
  // Kong OSS 3.9 entities the local gateway does not run: none held, none accepted.
  for (const type of NOT_RUN) {
    router.get(`/${type}`, (ctx) => {
      ctx.body = paginate([], ctx, { path: `/${type}`, filters: true });
    });
    router.get(`/${type}/:id`, () => {
      throw new NotFound();
    });
    router.post(`/${type}`, refusal(type));
    router.put(`/${type}/:id`, refusal(type));
    router.patch(`/${type}/:id`, refusal(type));
  }
  // The same under a consumer, where go-kong and decK write credentials: the consumer is looked
  // up (404 when absent, as Kong), it holds none of them, and a write is refused naming the type.
  for (const [type, nested] of NESTED_CREDENTIALS) {
    router.get(`/consumers/:consumer/${nested}`, (ctx) => {
      const consumer = service.find('consumers', ctx.params.consumer ?? '');
      ctx.body = paginate([], ctx, { path: `/consumers/${consumer.id}/${nested}`, filters: false });
    });
    router.get(`/consumers/:consumer/${nested}/:id`, (ctx) => {
      service.find('consumers', ctx.params.consumer ?? '');
      throw new NotFound();
    });
    router.post(`/consumers/:consumer/${nested}`, refusal(type));
    router.put(`/consumers/:consumer/${nested}/:id`, refusal(type));
    router.patch(`/consumers/:consumer/${nested}/:id`, refusal(type));
  }
  router.all(['/filter-chains', '/filter-chains/:id'], (ctx) => {
    // kong/api/routes/filter_chains.lua with wasm off (Kong's default)
    ctx.status = 400;
    ctx.body = { message: 'this endpoint is only available when wasm is enabled' };
  });

}
