import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import type { EntityService, Parent } from '../db/entity-service.ts';
import { definitionOf } from '../schema/entities/index.ts';
import { NotFound } from '../schema/errors.ts';
import { isUuid } from '../schema/typedefs.ts';
import { entityArguments } from './arguments.ts';
import { entityKey, unescapedParam } from './path-keys.ts';
import { optionsAnswer } from './request-filters.ts';

/**
 * kong/plugins/acl/api.lua: `/consumers/{consumer}/acls/{group}` names an ACL by its group within
 * the consumer (the cache key consumer + group); a UUID is an id and goes to the generic endpoint.
 * A group the consumer is not in is 404, OPTIONS included, except for PUT, which creates it (the
 * URL's group unless the body gives one).
 */
export function mountAclRoutes(router: Router, service: EntityService): void {
  const path = '/consumers/:consumers/acls/:acls';

  /** The ACL's id when the consumer has the group; undefined when it has not. */
  const aclId = (ctx: Koa.Context): { parent: Parent; group: string; id: string | undefined } => {
    const consumerKey = entityKey(ctx, 'consumers', 'consumers');
    const group = unescapedParam(ctx, 'acls').text;
    const consumerId = isUuid(consumerKey) ? consumerKey : service.select('consumers', consumerKey)?.id;
    if (consumerId === undefined) throw new NotFound();
    const acl = service.list('acls', { field: 'consumer', id: consumerId }).find((entry) => entry.group === group);
    return { parent: { field: 'consumer', key: consumerKey }, group, id: acl?.id };
  };
  const byGroup = (ctx: Koa.Context) => !isUuid(unescapedParam(ctx, 'acls').text);
  const body = (ctx: Koa.Context) => entityArguments(ctx, definitionOf('acls'), service.subschemas);
  const existing = (ctx: Koa.Context) => {
    const found = aclId(ctx);
    if (found.id === undefined) throw new NotFound();
    return { parent: found.parent, id: found.id };
  };

  // the plugin's `before` (api.lua:14-50) runs for OPTIONS too: a group the consumer is not in is 404
  router.options(
    path,
    async (ctx, next) => {
      if (byGroup(ctx)) existing(ctx);
      await next();
    },
    optionsAnswer(router),
  );
  router.get(path, async (ctx, next) => {
    if (!byGroup(ctx)) {
      await next();
      return;
    }
    const { parent, id } = existing(ctx);
    ctx.body = service.present('acls', service.find('acls', id, parent));
  });
  router.patch(path, async (ctx, next) => {
    if (!byGroup(ctx)) {
      await next();
      return;
    }
    const { parent, id } = existing(ctx);
    ctx.body = service.present('acls', await service.update('acls', id, body(ctx), { parent }));
  });
  router.delete(path, async (ctx, next) => {
    if (!byGroup(ctx)) {
      await next();
      return;
    }
    const { parent, id } = existing(ctx);
    await service.delete('acls', id, { parent });
    ctx.status = 204;
  });
  router.put(path, async (ctx, next) => {
    if (!byGroup(ctx)) {
      await next();
      return;
    }
    const { parent, group, id } = aclId(ctx);
    const input = body(ctx);
    const given = input.group === undefined || input.group === null ? { ...input, group } : input;
    ctx.body = service.present('acls', await service.upsert('acls', id ?? randomUUID(), given, { parent }));
  });
}
