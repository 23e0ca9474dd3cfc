import type Router from '@koa/router';
import { ENTITY_FIELDS, KongValidationError, schemaViolation, validateEntity } from '../schema/entity-schemas.ts';
import { kongSchemaField, kongSchemaFields, type FieldErrors } from '../schema/field-schema.ts';
import type { PluginRegistry } from '../schema/plugins/registry.ts';

// Kong's schema endpoints (kong/api/routes/kong.lua): decK reads entity and plugin schemas from
// them to fill defaults before it diffs, and the validate endpoints check an entity unstored.

type EntityName = keyof typeof ENTITY_FIELDS;
const isEntityName = (name: string): name is EntityName => Object.hasOwn(ENTITY_FIELDS, name);

/** Kong keeps `ttl` out of key-auth's schema: it is a DAO option (ttl = true), not a field. */
const HIDDEN: Partial<Record<EntityName, readonly string[]>> = { keyauth_credentials: ['ttl'] };

const ENTITY_META: Record<EntityName, Record<string, unknown>> = {
  services: { name: 'services', primary_key: ['id'], endpoint_key: 'name', workspaceable: true },
  routes: { name: 'routes', primary_key: ['id'], endpoint_key: 'name', workspaceable: true, subschema_key: 'protocols' },
  consumers: { name: 'consumers', primary_key: ['id'], endpoint_key: 'username', workspaceable: true },
  keyauth_credentials: { name: 'keyauth_credentials', primary_key: ['id'], endpoint_key: 'key', workspaceable: true, ttl: true },
  plugins: { name: 'plugins', primary_key: ['id'], workspaceable: true, subschema_key: 'name' },
};

export function entitySchema(name: EntityName): Record<string, unknown> {
  const hidden = HIDDEN[name] ?? [];
  const fields = ENTITY_FIELDS[name].filter((entry) => !Object.keys(entry).some((field) => hidden.includes(field)));
  return { ...ENTITY_META[name], fields: kongSchemaFields(fields) };
}

/** A plugin's subschema as `/schemas/plugins/{name}` prints it: scope fields, protocols, config. */
export function pluginSchema(registry: PluginRegistry, name: string): Record<string, unknown> | undefined {
  const definition = registry.get(name);
  if (!definition) return undefined;
  const scope = (field: string, reference: string, forbidden: boolean | undefined) => ({
    [field]: forbidden ? { type: 'foreign', reference, eq: null } : { type: 'foreign', reference, default: null },
  });
  return {
    fields: [
      scope('consumer', 'consumers', definition.noConsumer),
      scope('service', 'services', definition.noService),
      scope('route', 'routes', definition.noRoute),
      { protocols: kongSchemaField({ type: 'set', required: true, default: ['grpc', 'grpcs', 'http', 'https'], elements: { type: 'string', one_of: ['grpc', 'grpcs', 'http', 'https'] } }) },
      { config: { ...kongSchemaField({ type: 'record', fields: definition.configFields }), required: true } },
    ],
  };
}

function validateUnstored(registry: PluginRegistry, name: EntityName, input: Record<string, unknown>): void {
  const errors: FieldErrors = {};
  if (name === 'plugins') {
    const { config, ...rest } = input;
    const fields = validateEntity('plugins', rest, errors);
    if (typeof fields.name === 'string') {
      const scope = { consumer: !!fields.consumer, route: !!fields.route, service: !!fields.service };
      registry.validateConfig(fields.name, config, scope, errors);
    }
  } else {
    validateEntity(name, input, errors);
  }
  if (Object.keys(errors).length > 0) throw new KongValidationError(schemaViolation(errors));
}

export function mountSchemaRoutes(router: Router, registry: PluginRegistry): void {
  const noEntity = (name: string) => ({ message: `No entity named '${name}'` });
  router.get('/schemas/plugins/:name', (ctx) => {
    const schema = pluginSchema(registry, ctx.params.name!);
    ctx.status = schema ? 200 : 404;
    ctx.body = schema ?? { message: `No plugin named '${ctx.params.name!}'` };
  });
  router.post('/schemas/plugins/validate', (ctx) => {
    validateUnstored(registry, 'plugins', (ctx.request.body ?? {}) as Record<string, unknown>);
    ctx.body = { message: 'schema validation successful' };
  });
  router.get('/schemas/:name', (ctx) => {
    const name = ctx.params.name!;
    ctx.status = isEntityName(name) ? 200 : 404;
    ctx.body = isEntityName(name) ? entitySchema(name) : noEntity(name);
  });
  router.post('/schemas/:name/validate', (ctx) => {
    const name = ctx.params.name!;
    if (!isEntityName(name)) {
      ctx.status = 404;
      ctx.body = noEntity(name);
      return;
    }
    validateUnstored(registry, name, (ctx.request.body ?? {}) as Record<string, unknown>);
    ctx.body = { message: 'schema validation successful' };
  });
}
