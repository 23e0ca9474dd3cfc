import type { TProperties, TSchema } from '@sinclair/typebox';
import { kongField, type KongAttributes } from './typedefs.ts';

/**
 * Kong's field validation (kong/db/schema/init.lua validate_field, process_auto_fields) over the
 * schemas of typedefs.ts: defaults filled in, `null` kept for fields that are not required,
 * unknown fields refused, and Kong's messages, keyed by dotted path (`config.minute`).
 */
export type FieldErrors = Record<string, string>;

/**
 * Sets a record's entity-level errors, Kong's errors["@entity"] list (kong/db/schema/init.lua
 * insert_entity_error): one is `@entity`, several `@entity.1`, `@entity.2`… in the order the
 * checks ran (errors.ts nests either as the `@entity` list).
 */
export function setEntityErrors(errors: FieldErrors, messages: readonly string[], path = ''): void {
  const at = path ? `${path}.@entity` : '@entity';
  if (messages.length === 1) errors[at] = messages[0]!;
  else messages.forEach((message, i) => (errors[`${at}.${i + 1}`] = message));
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function typeError(a: KongAttributes, value: unknown): string | undefined {
  switch (a.type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'expected a string';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'expected a boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? undefined : 'expected an integer';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'expected a number';
    case 'array':
      return Array.isArray(value) ? undefined : 'expected an array';
    case 'set':
      return Array.isArray(value) ? undefined : 'expected a set';
    case 'map':
      return isPlainObject(value) ? undefined : 'expected a map';
    case 'record':
    case 'foreign':
      return isPlainObject(value) ? undefined : 'expected a record';
  }
}

/** A default's own copy (defaults are JSON data). */
const clone = (value: unknown): unknown => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

export interface RecordOptions {
  /** Fields with `auto` (ids, timestamps) are left as given: the entity service fills them. */
  skipAuto?: boolean;
}

/**
 * Validates a record's fields, returning them with defaults filled in; problems go to `errors`.
 * Internal fields are not part of the input: they are unknown there, as any other name.
 */
export function validateFields(
  fields: TProperties,
  value: unknown,
  path: string,
  errors: FieldErrors,
  options: RecordOptions = {},
): Record<string, unknown> {
  const input = value === undefined || value === null ? {} : value;
  const at = (name: string) => (path ? `${path}.${name}` : name);
  if (!isPlainObject(input)) {
    errors[path] = 'expected a record';
    return {};
  }
  const output: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(fields)) {
    const { attributes } = kongField(schema);
    if (attributes.internal) continue;
    if (attributes.abstract) {
      output[name] = input[name] ?? null;
      continue;
    }
    if (attributes.auto && options.skipAuto) {
      if (input[name] !== undefined) output[name] = validateField(schema, input[name], at(name), errors);
      continue;
    }
    output[name] = validateField(schema, input[name], at(name), errors);
  }
  for (const name of Object.keys(input)) {
    const schema = fields[name];
    if (!schema || kongField(schema).attributes.internal) errors[at(name)] = 'unknown field';
  }
  return output;
}

/** A field's value: its default when absent, validated; the value as given when invalid. */
export function validateField(schema: TSchema, value: unknown, path: string, errors: FieldErrors): unknown {
  const { attributes: a } = kongField(schema);
  if (value === undefined) {
    if (a.default !== undefined) value = clone(a.default);
    // An absent record is filled with its fields' defaults, as Kong does (e.g. config.redis).
    else if (a.type === 'record') return validateFields(a.fields ?? {}, {}, path, errors);
  }
  if (value === undefined || value === null) {
    if (a.required) errors[path] = 'required field missing';
    return null;
  }
  const problem = typeError(a, value);
  if (problem) {
    errors[path] = problem;
    return value;
  }
  if (Array.isArray(value)) return validateElements(a, value, path, errors);
  if (isPlainObject(value)) {
    if (a.type === 'record') return validateFields(a.fields ?? {}, value, path, errors);
    if (a.type === 'foreign') return foreignKey(value, path, errors);
    return validateMap(a, value, path, errors);
  }
  return validateScalar(a, value, path, errors);
}

/**
 * A foreign key is the referenced entity's primary key: Kong reads `id` and ignores the other
 * fields, so a whole entity may be sent (kong/db/schema/init.lua validate_primary_key(pk, true)).
 */
function foreignKey(value: Record<string, unknown>, path: string, errors: FieldErrors): unknown {
  const id = value.id;
  if (id === undefined || id === null) {
    errors[`${path}.id`] = id === null ? 'required field missing' : 'missing primary key';
    return value;
  }
  if (typeof id !== 'string') {
    errors[`${path}.id`] = 'expected a string';
    return value;
  }
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    errors[`${path}.id`] = 'expected a valid UUID';
    return value;
  }
  return { id };
}

function validateElements(a: KongAttributes, items: unknown[], path: string, errors: FieldErrors): unknown[] {
  if (a.len_min !== undefined && items.length < a.len_min) errors[path] = `length must be at least ${a.len_min}`;
  // Elements are required: `[null]` is an error, as Kong's validate_elements sets.
  const elements = a.elements;
  const result = elements ? items.map((item, i) => validateRequired(elements, item, `${path}.${i + 1}`, errors)) : items;
  if (a.mutually_exclusive_subsets && errors[path] === undefined) {
    const exclusive = mutuallyExclusive(result, a.mutually_exclusive_subsets);
    if (exclusive) errors[path] = exclusive;
  }
  return a.type === 'set' ? [...new Set(result)] : result;
}

/**
 * kong/db/schema/init.lua validators.mutually_exclusive_subsets (3.9.3, :355-378): the subsets the
 * elements come from, in the order of the first element of each; more than one is an error.
 */
function mutuallyExclusive(items: unknown[], subsets: readonly (readonly string[])[]): string | undefined {
  const memberOf: Array<readonly string[]> = [];
  for (const item of items) {
    const subset = subsets.find((candidate) => candidate.includes(item as string));
    if (subset && !memberOf.includes(subset)) memberOf.push(subset);
  }
  if (memberOf.length <= 1) return undefined;
  return `these sets are mutually exclusive: ${memberOf.map((subset) => `(${subset.map((element) => `'${element}'`).join(', ')})`).join(', ')}`;
}

function validateMap(a: KongAttributes, value: Record<string, unknown>, path: string, errors: FieldErrors): Record<string, unknown> {
  // Keys and values are required too (the "map" branch of validate_field).
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (a.keys) validateRequired(a.keys, key, `${path}.${key}`, errors);
    result[key] = a.values ? validateRequired(a.values, item, `${path}.${key}`, errors) : item;
  }
  return result;
}

function validateRequired(schema: TSchema, value: unknown, path: string, errors: FieldErrors): unknown {
  if (value === undefined || value === null) {
    errors[path] = 'required field missing';
    return null;
  }
  return validateField(schema, value, path, errors);
}

function validateScalar(a: KongAttributes, value: unknown, path: string, errors: FieldErrors): unknown {
  const number = typeof value === 'number' ? value : undefined;
  const text = typeof value === 'string' ? value : undefined;
  if (a.one_of && (typeof value === 'string' || typeof value === 'number') && !a.one_of.includes(value)) {
    errors[path] = `expected one of: ${a.one_of.join(', ')}`;
  } else if (a.between && number !== undefined && (number < a.between[0] || number > a.between[1])) {
    errors[path] = `value should be between ${a.between[0]} and ${a.between[1]}`;
  } else if (a.gt !== undefined && number !== undefined && number <= a.gt) {
    errors[path] = `value must be greater than ${a.gt}`;
  } else if (text !== undefined && text.length < (a.len_min ?? 1)) {
    // Empty strings are refused unless a field says len_min = 0 (validate_field).
    errors[path] = `length must be at least ${a.len_min ?? 1}`;
  } else if (a.starts_with !== undefined && text !== undefined && !text.startsWith(a.starts_with)) {
    errors[path] = `should start with: ${a.starts_with}`;
  } else if (a.match && text !== undefined && !a.match.test(text)) {
    errors[path] = `invalid value: ${text}`;
  } else if (a.custom && text !== undefined) {
    const error = a.custom(text);
    if (error) errors[path] = error;
  }
  return value;
}
