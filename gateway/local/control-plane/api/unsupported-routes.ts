import type Router from '@koa/router';
import type { EntityService } from '../db/entity-service.ts';
import { NotFound, SchemaViolation } from '../schema/errors.ts';
import { paginate } from './listing.ts';
import { entityKey } from './path-keys.ts';

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

/** Their schemas' names, which Kong names their keys after (`/basic-auths/:basicauth_credentials`). */
const SCHEMA_NAMES: Record<(typeof NOT_RUN)[number], string> = {
  upstreams: 'upstreams',
  vaults: 'vaults',
  keys: 'keys',
  'key-sets': 'key_sets',
  'basic-auths': 'basicauth_credentials',
  'hmac-auths': 'hmacauth_credentials',
  jwts: 'jwt_secrets',
  oauth2: 'oauth2_credentials',
};

/** What a write of a type the gateway does not run answers, naming the type. */
export const notRunError = (type: string): SchemaViolation =>
  new SchemaViolation({ '@entity': `${type}: not supported by the local gateway (it runs certificates, SNIs, CA certificates, services, routes, consumers, key-auth credentials, ACLs and plugins)` });

/** The schema names of the types above (and targets, written under upstreams), which `/schemas/{name}/validate` refuses as a write. */
export const NOT_RUN_SCHEMAS: ReadonlySet<string> = new Set([...Object.values(SCHEMA_NAMES), 'targets']);

const refusal = (type: string) => () => {
  throw notRunError(type);
};

export function mountUnsupportedRoutes(router: Router, service: EntityService): void {
  // Kong OSS 3.9 entities the local gateway does not run: none held, none accepted.
  for (const type of NOT_RUN) {
    router.get(`/${type}`, (ctx) => {
      ctx.body = paginate([], ctx, { path: `/${type}`, filters: true });
    });
    const entity = `/${type}/:${SCHEMA_NAMES[type]}`;
    router.get(entity, () => {
      throw new NotFound();
    });
    router.post(`/${type}`, refusal(type));
    router.put(entity, refusal(type));
    router.patch(entity, refusal(type));
  }
  // The same under a consumer, where go-kong and decK write credentials: the consumer is looked
  // up (404 when absent, as Kong), it holds none of them, and a write is refused naming the type.
  for (const [type, nested] of NESTED_CREDENTIALS) {
    const collection = `/consumers/:consumers/${nested}`;
    const entity = `${collection}/:${SCHEMA_NAMES[type]}`;
    router.get(collection, (ctx) => {
      const consumer = service.find('consumers', entityKey(ctx, 'consumers', 'consumers'));
      ctx.body = paginate([], ctx, { path: `/consumers/${consumer.id}/${nested}`, filters: false });
    });
    router.get(entity, (ctx) => {
      service.find('consumers', entityKey(ctx, 'consumers', 'consumers'));
      throw new NotFound();
    });
    router.post(collection, refusal(type));
    router.put(entity, refusal(type));
    router.patch(entity, refusal(type));
  }
  router.all(['/filter-chains', '/filter-chains/:filter_chains'], (ctx) => {
    // kong/api/routes/filter_chains.lua with wasm off (Kong's default)
    ctx.status = 400;
    ctx.body = { message: 'this endpoint is only available when wasm is enabled' };
  });

}
