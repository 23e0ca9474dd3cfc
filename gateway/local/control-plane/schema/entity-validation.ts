import type { Static, TObject, TProperties, TSchema } from '@sinclair/typebox';
import { definitionOf, isEntityName } from './entities/index.ts';
import type { EntityDefinition, RunDefinition, Subschemas } from './entity.ts';
import { kongField } from './typedefs.ts';
import { isPlainObject, validateField, validateFields, type FieldErrors } from './validate.ts';

export type Input = Record<string, unknown>;

const isSet = (value: unknown) => value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0);

/**
 * An entity's input checked against its definition, without the store: shorthands expanded,
 * fields validated and defaulted (auto fields left to the entity service), then what the local
 * gateway cannot run refused, Kong's entity checks and the subschema (a plugin's config). What
 * `/schemas/{entity}/validate`, kong.yml's loader and every write share.
 */
export function validateEntityInput<P extends TProperties>(
  definition: EntityDefinition<P>,
  input: unknown,
  subschemas: Subschemas,
): { fields: Static<TObject<P>>; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const given: Input = isPlainObject(input) ? { ...input } : {};
  if (!isPlainObject(input)) errors['@entity'] = 'expected a record';
  for (const [name, expand] of Object.entries(definition.shorthands ?? {})) {
    if (!(name in given)) continue;
    const value = given[name];
    delete given[name];
    Object.assign(given, expand(value, errors));
  }
  // a shorthand's error is all Kong answers: process_auto_fields stops there (kong/db/schema/init.lua:1798-1859)
  if (Object.keys(errors).length > 0) return { fields: given as Static<TObject<P>>, errors };
  for (const [name, reason] of Object.entries(definition.refusedInput ?? {})) {
    if (isSet(given[name])) errors[name] = `not supported by the local gateway: ${reason}`;
    delete given[name];
  }
  const key = definition.subschema_key === undefined ? undefined : given[definition.subschema_key];
  const replaced = typeof key === 'string' ? subschemas.fields(key) : undefined;
  const properties = replaced ? { ...definition.schema.properties, ...replaced } : definition.schema.properties;
  const record = validateFields(properties, given, '', errors, { skipAuto: true });
  foreignRecordErrors(definition.schema.properties, given, errors);
  // The fields as the entity's type: every field validated (auto ones the entity service fills).
  const fields = record as Static<TObject<P>>;
  for (const [name, reason] of Object.entries<string | undefined>(definition.unsupported ?? {})) {
    if (isSet(record[name])) errors[name] = `not supported by the local gateway: ${reason}`;
  }
  // Valid for Kong, outside what the data plane runs: the data plane would refuse the whole
  // configuration, and every node would keep the one before it from then on.
  for (const [name, narrow] of Object.entries<TSchema | undefined>((definition as Partial<RunDefinition<P>>).snapshot?.narrow ?? {})) {
    if (narrow === undefined || Object.keys(errors).some((path) => path === name || path.startsWith(`${name}.`))) continue;
    const outside: FieldErrors = {};
    validateField(narrow, record[name], name, outside);
    const [problem] = Object.values(outside);
    if (problem !== undefined) errors[name] = `not supported by the local gateway: ${problem}`;
  }
  const fieldsValid = Object.keys(errors).length === 0;
  if (definition.subschema && typeof record[definition.subschema_key ?? ''] === 'string') definition.subschema(fields, errors, subschemas);
  if (fieldsValid) definition.check?.(fields, errors);
  if (Object.keys(errors).length === 0) definition.transform?.(fields);
  return { fields, errors };
}

const AT_LEAST_ONE_OF = 'at least one of these fields must be non-empty: ';

/**
 * A PATCH's errors in validate_update's words: Kong prefixes the at-least-one-of checks' message,
 * nested ones (a plugin's config) included, while it validates an update
 * (kong/db/schema/init.lua:2200-2220, 3.9.3).
 */
export function updateErrors(errors: FieldErrors): FieldErrors {
  return Object.fromEntries(
    Object.entries(errors).map(([path, message]) => [path, message.startsWith(AT_LEAST_ONE_OF) ? `when updating, ${message}` : message]),
  );
}

/**
 * A foreign key without a valid primary key is checked as a record of the type it references, its
 * given fields only; their errors replace the primary key's (kong/db/schema/init.lua:963-975,
 * 3.9.3: validate_primary_key, then validate(value, false)): `service.protocol: expected one of`
 * rather than `service.id: missing primary key`. (That check's entity checks are not run.)
 */
function foreignRecordErrors(properties: TProperties, given: Input, errors: FieldErrors): void {
  for (const [field, foreign] of Object.entries(properties)) {
    const { reference } = kongField(foreign).attributes;
    const value = given[field];
    if (reference === undefined || !isEntityName(reference) || !isPlainObject(value) || errors[`${field}.id`] === undefined) continue;
    const fields = definitionOf(reference).schema.properties;
    const nested: FieldErrors = {};
    for (const [name, item] of Object.entries(value)) {
      const schema = fields[name];
      if (schema === undefined || kongField(schema).attributes.internal) nested[`${field}.${name}`] = 'unknown field';
      else validateField(schema, item, `${field}.${name}`, nested);
    }
    if (Object.keys(nested).length === 0) continue;
    delete errors[`${field}.id`];
    Object.assign(errors, nested);
  }
}
