import type Router from '@koa/router';
import type Koa from 'koa';
import type { EntityService, Parent } from '../db/entity-service.ts';
import { ENTITY_NAMES, definitionOf, foreignFields, type AnyEntity, type EntityName } from '../schema/entities/index.ts';
import { MethodNotAllowed, NotFound } from '../schema/errors.ts';
import { isPlainObject } from '../schema/validate.ts';
import { entityArguments } from './arguments.ts';
import { paginate } from './listing.ts';
import { entityKey } from './path-keys.ts';

/**
 * The Admin API's entity endpoints, generated from the entity definitions as Kong's
 * kong/api/endpoints.lua generates them:
 *
 *   /{entities}                              GET (page), POST
 *   /{entities}/{key}                        GET, PUT (upsert), PATCH (update), DELETE
 *   /{entities}/{key}/{foreign}              the entity a foreign key references
 *   /{references}/{key}/{entities}           GET, POST, scoped to the parent
 *   /{references}/{key}/{entities}/{key}     GET, PUT, PATCH, DELETE, scoped to the parent
 *
 * `{key}` is an id, or the type's endpoint key (a name, a username, a key), its parameter named
 * after the type as Kong names it (`/services/:services/routes/:routes`).
 */

const pathName = (name: EntityName) => definitionOf(name).admin_api_name ?? name;
const nestedName = (name: EntityName) => definitionOf(name).admin_api_nested_name ?? pathName(name);


/** The entity a nested path is under, as its foreign field names it. */
const parentKey = (ctx: Koa.Context, { field, reference }: { field: string; reference: EntityName }): Parent => ({
  field,
  key: entityKey(ctx, reference, reference),
});

export function mountEntityEndpoints(router: Router, service: EntityService): void {
  const present = (name: EntityName) => (entity: AnyEntity) => service.present(name, entity);
  const body = (ctx: Koa.Context, name: EntityName) => entityArguments(ctx, definitionOf(name), service.subschemas);

  const collection = (path: string, name: EntityName, foreign?: { field: string; reference: EntityName }) => {
    const parent = (ctx: Koa.Context): Parent | undefined => (foreign ? parentKey(ctx, foreign) : undefined);
    router.get(path, (ctx) => {
      const scope = parent(ctx);
      if (!foreign || !scope) {
        ctx.body = paginate(service.list(name), ctx, { path: `/${pathName(name)}`, filters: true }, present(name));
        return;
      }
      const owner = service.parentOf(name, scope);
      const items = service.list(name, { field: foreign.field, id: owner.id });
      // the parent's key as the URL wrote it: kong/api/endpoints.lua:366-374 (self.params, not unescaped)
      const written = ctx.path.split('/')[2] ?? owner.id;
      ctx.body = paginate(items, ctx, { path: `/${pathName(foreign.reference)}/${written}/${nestedName(name)}`, filters: false }, present(name));
    });
    router.post(path, async (ctx) => {
      ctx.body = service.present(name, await service.insert(name, body(ctx, name), { parent: parent(ctx) }));
      ctx.status = 201;
    });
  };

  const entity = (path: string, name: EntityName, foreign?: { field: string; reference: EntityName }) => {
    const parent = (ctx: Koa.Context): Parent | undefined => (foreign ? parentKey(ctx, foreign) : undefined);
    const key = (ctx: Koa.Context) => entityKey(ctx, name, name);
    router.get(path, (ctx) => {
      ctx.body = service.present(name, service.find(name, key(ctx), parent(ctx)));
    });
    router.put(path, async (ctx) => {
      ctx.body = service.present(name, await service.upsert(name, key(ctx), body(ctx, name), { parent: parent(ctx) }));
    });
    router.patch(path, async (ctx) => {
      ctx.body = service.present(name, await service.update(name, key(ctx), body(ctx, name), { parent: parent(ctx) }));
    });
    router.delete(path, async (ctx) => {
      await service.delete(name, key(ctx), { parent: parent(ctx) });
      ctx.status = 204;
    });
  };

  /** `/routes/{route}/service`: the referenced entity, read and written through the referencing one. */
  const foreignEntity = (path: string, name: EntityName, field: string, reference: EntityName) => {
    const target = (ctx: Koa.Context): string => {
      const entity: Record<string, unknown> = service.find(name, entityKey(ctx, name, name));
      const key = entity[field];
      if (!isPlainObject(key) || typeof key.id !== 'string') throw new NotFound();
      return key.id;
    };
    router.get(path, (ctx) => {
      ctx.body = service.present(reference, service.find(reference, target(ctx)));
    });
    router.patch(path, async (ctx) => {
      ctx.body = service.present(reference, await service.update(reference, target(ctx), body(ctx, reference)));
    });
    router.put(path, async (ctx) => {
      ctx.body = service.present(reference, await service.upsertReferenced(name, entityKey(ctx, name, name), field, body(ctx, reference)));
    });
    router.delete(path, (ctx) => {
      target(ctx);
      throw new MethodNotAllowed();
    });
  };

  for (const name of ENTITY_NAMES) {
    collection(`/${pathName(name)}`, name);
    entity(`/${pathName(name)}/:${name}`, name);
    for (const { field, reference } of foreignFields(definitionOf(name))) {
      foreignEntity(`/${pathName(name)}/:${name}/${field}`, name, field, reference);
      collection(`/${pathName(reference)}/:${reference}/${nestedName(name)}`, name, { field, reference });
      entity(`/${pathName(reference)}/:${reference}/${nestedName(name)}/:${name}`, name, { field, reference });
    }
  }
}
