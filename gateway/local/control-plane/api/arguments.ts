import type Koa from 'koa';
import { definitionOf, isEntityName } from '../schema/entities/index.ts';
import type { EntityDefinition, Subschemas } from '../schema/entity.ts';
import { luaNumber } from '../schema/lua-number.ts';
import { isPlainObject } from '../schema/validate.ts';

/** A field's JSON Schema as the typedefs build it, with Kong's own type under `x-kong`. */
interface FieldSchema {
  type?: string;
  'x-kong'?: { type?: string; reference?: string };
  anyOf?: FieldSchema[];
  items?: FieldSchema;
  properties?: Record<string, FieldSchema>;
  patternProperties?: Record<string, FieldSchema>;
}

/** The field's schema without its `null` alternative (an optional field is `anyOf [X, null]`). */
const nonNull = (field: FieldSchema): FieldSchema => field.anyOf?.find((member) => member.type !== 'null') ?? field;

function inferFields(values: Record<string, unknown>, fields: Record<string, FieldSchema> | undefined): Record<string, unknown> {
  if (!fields) return values;
  const inferred: Record<string, unknown> = { ...values };
  for (const [name, value] of Object.entries(values)) {
    if (Object.hasOwn(fields, name)) inferred[name] = inferValue(value, fields[name]);
  }
  return inferred;
}

/** kong/api/arguments.lua infer_value (3.9.3): a form's text read as the field's type. */
function inferValue(value: unknown, field: FieldSchema | undefined): unknown {
  if (value === undefined || field === undefined) return value;
  if (value === '' || value === null) return null;
  const schema = nonNull(field);
  switch (schema['x-kong']?.type ?? schema.type) {
    case 'number':
    case 'integer':
      return typeof value === 'string' ? (luaNumber(value) ?? value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    case 'array':
    case 'set':
      return (Array.isArray(value) ? value : [value]).map((item) => inferValue(item, schema.items));
    case 'map': {
      if (!isPlainObject(value)) return value;
      const values = Object.values(schema.patternProperties ?? {})[0];
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inferValue(item, values)]));
    }
    case 'foreign': {
      // read by the referenced type's own fields, which it may name (`service.port`): arguments.lua:183-186
      const reference = schema['x-kong']?.reference;
      const fields = reference !== undefined && isEntityName(reference) ? definitionOf(reference).schema.properties : schema.properties;
      return isPlainObject(value) ? inferFields(value, fields as Record<string, FieldSchema>) : value;
    }
    default:
      // a record
      return isPlainObject(value) ? inferFields(value, schema.properties) : value;
  }
}

/**
 * What a write's body gives for an entity of `definition`'s type. JSON as sent; a form's or a
 * multipart body's values are text, read by the entity's schema as Kong reads them
 * (kong/api/arguments.lua infer, 3.9.3): '' is null, numbers and booleans from their text, a lone
 * value where a list goes a list of one, a plugin's config by that plugin's schema
 * (its subschema, chosen by name), and `ttl` for types with expiring rows.
 */
export function entityArguments(ctx: Koa.Context, definition: EntityDefinition, subschemas: Subschemas): Record<string, unknown> {
  const body: unknown = ctx.request.body;
  const args = isPlainObject(body) ? body : {};
  if (!ctx.request.is('urlencoded', 'multipart')) return args;
  const inferred = inferFields(args, definition.schema.properties as Record<string, FieldSchema>);
  // the shorthand fields are inferred too (arguments.lua:242-253): strings, so only '' changes, to null
  for (const name of Object.keys(definition.shorthands ?? {})) if (inferred[name] === '') inferred[name] = null;
  const subschemaKey = definition.subschema_key;
  if (subschemaKey !== undefined && typeof inferred[subschemaKey] === 'string' && isPlainObject(inferred.config)) {
    const config = subschemas.configSchema(inferred[subschemaKey]) as FieldSchema | undefined;
    inferred.config = inferFields(inferred.config, config?.properties);
  }
  if (definition.ttl === true && typeof inferred.ttl === 'string') inferred.ttl = luaNumber(inferred.ttl) ?? inferred.ttl;
  return inferred;
}

/** kong/api/arguments.lua:43-45 (3.9.3): max_uri_args, max_post_args. */
const MAX_ARGUMENTS = 1000;

/** More arguments than nginx reads ('&'-separated, empty ones skipped): Kong answers 400 (arguments.lua:489-513). */
export const tooManyArguments = (text: string): boolean => text.split('&').filter((argument) => argument !== '').length > MAX_ARGUMENTS;

/** 400 "Too many arguments" for a query of more than 1000 arguments, before any route (arguments.lua:489-492). */
export const queryArgumentLimit: Koa.Middleware = async (ctx, next) => {
  if (!tooManyArguments(ctx.querystring)) {
    await next();
    return;
  }
  ctx.status = 400;
  ctx.body = { message: 'Too many arguments' };
};
