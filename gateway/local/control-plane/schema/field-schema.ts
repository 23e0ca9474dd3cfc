/**
 * A small reading of Kong's schema DSL (kong/db/schema/init.lua): enough to validate and default
 * plugin configurations the way the Admin API and declarative loader do. Native plugins write their
 * schemas in it; custom Lua plugins' schema.lua tables are converted into it.
 */
export type FieldType = 'string' | 'boolean' | 'integer' | 'number' | 'array' | 'set' | 'record' | 'map';

export interface FieldSchema {
  type: FieldType;
  required?: boolean;
  default?: unknown;
  one_of?: readonly (string | number)[];
  between?: readonly [number, number];
  gt?: number;
  len_min?: number;
  /** Lua pattern-free subset: a JS regular expression the string must match. */
  match?: RegExp;
  /** Kong's `custom_validator`: the error for a string value, or undefined when it is valid. */
  custom?: (value: string) => string | undefined;
  elements?: FieldSchema;
  fields?: ReadonlyArray<Readonly<Record<string, FieldSchema>>>;
  keys?: FieldSchema;
  values?: FieldSchema;
  /** A foreign key (`type = "foreign"` in Kong): the entity it references. Validated as a record. */
  reference?: string;
  /** Kong's `auto = true` (ids and timestamps the database fills in). */
  auto?: boolean;
}

/** `{ "config.minute": "expected a number" }`-style errors, flattened with dotted paths. */
export type FieldErrors = Record<string, string>;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function typeError(schema: FieldSchema, value: unknown): string | undefined {
  switch (schema.type) {
    case 'string':
      return typeof value === 'string' ? undefined : 'expected a string';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'expected a boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? undefined : 'expected an integer';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'expected a number';
    case 'array':
    case 'set':
      return Array.isArray(value) ? undefined : schema.type === 'set' ? 'expected a set' : 'expected an array';
    case 'record':
    case 'map':
      return isPlainObject(value) ? undefined : schema.type === 'map' ? 'expected a map' : 'expected a record';
  }
}

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * Validates `value` against a record schema, returning the value with defaults filled in and
 * the errors found (empty when valid). `null` is kept for optional fields, like Kong's ngx.null.
 */
export function validateRecord(
  fields: FieldSchema['fields'],
  value: unknown,
  path: string,
  errors: FieldErrors,
): Record<string, unknown> {
  const input = value === undefined || value === null ? {} : value;
  if (!isPlainObject(input)) {
    errors[path] = 'expected a record';
    return {};
  }
  const known = new Set<string>();
  const output: Record<string, unknown> = {};
  for (const entry of fields ?? []) {
    for (const [name, schema] of Object.entries(entry)) {
      known.add(name);
      output[name] = validateField(schema, input[name], path ? `${path}.${name}` : name, errors);
    }
  }
  for (const name of Object.keys(input)) {
    if (!known.has(name)) errors[path ? `${path}.${name}` : name] = 'unknown field';
  }
  return output;
}

export function validateField(schema: FieldSchema, value: unknown, path: string, errors: FieldErrors): unknown {
  if (value === undefined) {
    if (schema.default !== undefined) value = clone(schema.default);
    // An absent record is filled with its fields' defaults, as Kong does (e.g. config.redis).
    else if (schema.type === 'record') return validateRecord(schema.fields, {}, path, errors);
  }
  if (value === undefined || value === null) {
    if (schema.required) errors[path] = 'required field missing';
    return null;
  }
  const problem = typeError(schema, value);
  if (problem) {
    errors[path] = problem;
    return value;
  }
  if (schema.type === 'record') return validateRecord(schema.fields, value, path, errors);
  if (schema.type === 'array' || schema.type === 'set') {
    const items = value as unknown[];
    if (schema.len_min !== undefined && items.length < schema.len_min) {
      errors[path] = `length must be at least ${schema.len_min}`;
    }
    // Elements are required: `[null]` is an error, as Kong's validate_elements sets (kong/db/schema/init.lua).
    const elements = schema.elements && { ...schema.elements, required: true };
    const result = elements ? items.map((item, i) => validateField(elements, item, `${path}.${i + 1}`, errors)) : items;
    return schema.type === 'set' ? [...new Set(result)] : result;
  }
  if (schema.type === 'map') {
    // Keys and values are required too (kong/db/schema/init.lua, the "map" branch of validate_field).
    const values = schema.values && { ...schema.values, required: true };
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (schema.keys) validateField(schema.keys, key, `${path}.${key}`, errors);
      result[key] = values ? validateField(values, item, `${path}.${key}`, errors) : item;
    }
    return result;
  }
  if (schema.one_of && !schema.one_of.includes(value as string | number)) {
    errors[path] = `expected one of: ${schema.one_of.join(', ')}`;
  } else if (schema.between && ((value as number) < schema.between[0] || (value as number) > schema.between[1])) {
    errors[path] = `value should be between ${schema.between[0]} and ${schema.between[1]}`;
  } else if (schema.gt !== undefined && (value as number) <= schema.gt) {
    errors[path] = `value must be greater than ${schema.gt}`;
  } else if (typeof value === 'string' && value.length < (schema.len_min ?? 1)) {
    // Empty strings are refused unless a field says len_min = 0 (kong/db/schema/init.lua validate_field).
    errors[path] = `length must be at least ${schema.len_min ?? 1}`;
  } else if (schema.match && !schema.match.test(value as string)) {
    errors[path] = `invalid value: ${String(value)}`;
  } else if (schema.custom && typeof value === 'string') {
    const error = schema.custom(value);
    if (error) errors[path] = error;
  }
  return value;
}

/** Kong's header_name typedef: letters, digits, dash and underscore. */
export const headerName: FieldSchema = { type: 'string', match: /^[A-Za-z0-9_-]+$/ };

/** A field as Kong's `/schemas/…` endpoints print it (kong/api/api_helpers.lua schema_to_jsonable). */
export function kongSchemaField(schema: FieldSchema): Record<string, unknown> {
  const out: Record<string, unknown> = { type: schema.reference ? 'foreign' : schema.type };
  if (schema.reference) out.reference = schema.reference;
  // Records in entities are required unless they say otherwise (kong/db/schema/entity.lua
  // make_records_required), which is why decK expands absent ones such as config.redis.
  if (schema.required || (schema.type === 'record' && !schema.reference && schema.required === undefined)) out.required = true;
  if (schema.auto) out.auto = true;
  if (schema.default !== undefined) out.default = schema.default;
  if (schema.one_of) out.one_of = [...schema.one_of];
  if (schema.between) out.between = [...schema.between];
  if (schema.gt !== undefined) out.gt = schema.gt;
  if (schema.len_min !== undefined) out.len_min = schema.len_min;
  if (schema.elements) out.elements = kongSchemaField(schema.elements);
  if (schema.keys) out.keys = kongSchemaField(schema.keys);
  if (schema.values) out.values = kongSchemaField(schema.values);
  if (schema.type === 'record' && !schema.reference) out.fields = kongSchemaFields(schema.fields ?? []);
  return out;
}

export function kongSchemaFields(fields: NonNullable<FieldSchema['fields']>): Array<Record<string, unknown>> {
  return fields.map((entry) => Object.fromEntries(Object.entries(entry).map(([name, schema]) => [name, kongSchemaField(schema)])));
}
