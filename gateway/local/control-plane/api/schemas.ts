import type Router from '@koa/router';
import type Koa from 'koa';
import type { EntityService } from '../db/entity-service.ts';
import type { TProperties } from '@sinclair/typebox';
import type { EntityDefinition } from '../schema/entity.ts';
import { definitionOf, isEntityName } from '../schema/entities/index.ts';
import { REFUSED_ENTITIES } from '../schema/entities/refused.ts';
import { validateEntityInput } from '../schema/entity-validation.ts';
import { refuseInvalid } from '../schema/errors.ts';
import { kongSchemaField, kongSchemaFields } from '../schema/kong-format.ts';
import type { PluginRegistry } from '../schema/plugins/registry.ts';
import { kongShorthandFields } from '../schema/plugins/shorthands.ts';
import { isPlainObject } from '../schema/validate.ts';
import { NOT_RUN_SCHEMAS, notRunError } from './unsupported-routes.ts';

// Kong's schema endpoints (kong/api/routes/kong.lua): decK reads entity and plugin schemas from
// them to fill defaults before it diffs, and the validate endpoints check an entity unstored.

/** Any entity type Kong has: the ones the gateway runs, then the ones it refuses. */
function definitionNamed(name: string): EntityDefinition<TProperties> | undefined {
  return isEntityName(name) ? definitionOf(name) : Object.hasOwn(REFUSED_ENTITIES, name) ? REFUSED_ENTITIES[name] : undefined;
}

/** An entity type's schema as `/schemas/{name}` prints it (kong/api/routes/kong.lua, api_helpers schema_to_jsonable). */
function entitySchema(definition: EntityDefinition<TProperties>): Record<string, unknown> {
  return {
    name: definition.name,
    primary_key: [...definition.primary_key],
    ...(definition.endpoint_key ? { endpoint_key: definition.endpoint_key } : {}),
    ...(definition.cache_key ? { cache_key: [...definition.cache_key] } : {}),
    ...(definition.subschema_key ? { subschema_key: definition.subschema_key } : {}),
    ...(definition.ttl ? { ttl: true } : {}),
    workspaceable: true,
    fields: kongSchemaFields(definition.schema.properties),
  };
}

/** A plugin's subschema as `/schemas/plugins/{name}` prints it: scope fields, protocols, config. */
export function pluginSchema(registry: PluginRegistry, name: string): Record<string, unknown> | undefined {
  const definition = registry.get(name);
  if (!definition) return undefined;
  const scope = (field: string, reference: string, forbidden: boolean | undefined) => ({
    [field]: forbidden ? { type: 'foreign', reference, eq: null } : { type: 'foreign', reference, default: null },
  });
  const config = kongSchemaField(definition.config);
  if (definition.shorthands?.length) config.shorthand_fields = kongShorthandFields(definition.shorthands);
  return {
    fields: [
      scope('consumer', 'consumers', definition.noConsumer),
      scope('service', 'services', definition.noService),
      scope('route', 'routes', definition.noRoute),
      // Kong prints the subschema as declared: a schema.lua without `protocols` has none here.
      ...(definition.protocols ? [{ protocols: kongSchemaField(definition.protocols) }] : []),
      { config },
    ],
  };
}

/**
 * What the validate endpoints check: Kong validates lapis' `self.params` (kong/api/routes/kong.lua:198-214),
 * a table even when no body came (none, an empty one, a multipart body it could not parse).
 */
const paramsOf = (ctx: Koa.Context): unknown => ctx.request.body ?? {};

export function mountSchemaRoutes(router: Router, registry: PluginRegistry, service: EntityService): void {
  const noEntity = (name: string) => ({ message: `No entity named '${name}'` });
  router.get('/schemas/plugins/:name', (ctx) => {
    const name = ctx.params.name ?? '';
    const schema = pluginSchema(registry, name);
    ctx.status = schema ? 200 : 404;
    ctx.body = schema ?? { message: `No plugin named '${name}'` };
  });
  router.post('/schemas/plugins/validate', (ctx) => {
    service.validate('plugins', paramsOf(ctx));
    ctx.body = { message: 'schema validation successful' };
  });
  router.get('/schemas/:name', (ctx) => {
    const name = ctx.params.name ?? '';
    const definition = definitionNamed(name);
    ctx.status = definition ? 200 : 404;
    ctx.body = definition ? entitySchema(definition) : noEntity(name);
  });
  router.post('/schemas/:db_entity_name/validate', (ctx) => {
    const name = ctx.params.db_entity_name ?? '';
    // kong/api/routes/kong.lua:211: the URL's parameter is dropped from the params before validating
    const body = paramsOf(ctx);
    const input = isPlainObject(body) ? Object.fromEntries(Object.entries(body).filter(([field]) => field !== 'db_entity_name')) : body;
    // A type the gateway does not run: the 400 its write gets, so `deck gateway validate` names it.
    if (NOT_RUN_SCHEMAS.has(name)) throw notRunError(name);
    const definition = definitionNamed(name);
    if (!definition) {
      ctx.status = 404;
      ctx.body = noEntity(name);
      return;
    }
    if (isEntityName(name)) service.validate(name, input);
    else refuseInvalid(validateEntityInput(definition, input, registry).errors);
    ctx.body = { message: 'schema validation successful' };
  });
}
