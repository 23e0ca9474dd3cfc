import { luaPretty } from './lua-pretty.ts';
import type { FieldErrors } from './validate.ts';

/** Kong's Admin API error bodies (kong/db/errors.lua): what the Admin API answers for each error class. */
export interface KongErrorBody {
  code: number;
  name: string;
  message: string;
  fields?: Record<string, unknown>;
  /** invalid options (code 11) name the options at fault here, not under `fields`. */
  options?: Record<string, unknown>;
}

/** An error Kong reports with a code, a name and the fields concerned; `status` is its HTTP status. */
export class KongError extends Error {
  constructor(readonly body: KongErrorBody, readonly status: number) {
    super(body.message);
  }
}

/** Nested `fields` from dotted paths, `@entity` messages collected in a list. */
function nest(errors: FieldErrors): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [path, message] of Object.entries(errors)) {
    const parts = path.split('.');
    const last = parts.pop() ?? path;
    let node = fields;
    for (const part of parts) {
      const next = node[part];
      node = (node[part] = typeof next === 'object' && next !== null ? next : {}) as Record<string, unknown>;
    }
    if (last === '@entity') {
      const list: unknown = node['@entity'];
      node['@entity'] = [...(Array.isArray(list) ? (list as unknown[]) : []), message];
    } else {
      node[last] = message;
    }
  }
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) fields[name] = asSequences(value as Record<string, unknown>);
  }
  return fields;
}

const INDEX = /^[1-9]\d*$/;

/**
 * Errors on an array's or a set's elements are keyed by position (`protocols.1`): Kong's JSON
 * encoder (cjson) writes such a table as an array, null where a position has no error
 * (`{"protocols": ["expected one of: ..."]}`, spec/02-integration/04-admin_api/09-routes_routes_spec.lua:368).
 */
function asSequences(node: Record<string, unknown>): Record<string, unknown> | unknown[] {
  for (const [name, value] of Object.entries(node)) {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) node[name] = asSequences(value as Record<string, unknown>);
  }
  const keys = Object.keys(node);
  if (keys.length === 0 || !keys.every((key) => INDEX.test(key))) return node;
  const length = Math.max(...keys.map(Number));
  return Array.from({ length }, (_, i) => node[String(i + 1)] ?? null);
}

/** Lua's sort of keys: numbers by value (an element's position), before names. */
function compareKeys(a: string, b: string): number {
  const [x, y] = [INDEX.test(a), INDEX.test(b)];
  if (x && y) return Number(a) - Number(b);
  if (x !== y) return x ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A table's keys, Lua's way: an array's positions from 1 that hold an error, sorted. */
const sortedKeys = (table: Record<string, unknown> | unknown[]): string[] =>
  (Array.isArray(table) ? table.flatMap((item, i) => (item === null ? [] : [String(i + 1)])) : Object.keys(table)).sort(compareKeys);

const isTable = (value: unknown): value is Record<string, unknown> | unknown[] => typeof value === 'object' && value !== null;

/**
 * kong/db/errors.lua:223-248 (3.9.3): the entity's own errors first, then each field's by sorted
 * name, one level of sub-fields (`config.minute`), anything deeper printed as a Lua table.
 */
function violations(fields: Record<string, unknown>): string[] {
  const list: string[] = [];
  const entity = fields['@entity'];
  if (Array.isArray(entity)) list.push(...entity.map(String));
  for (const name of sortedKeys(fields)) {
    const value = fields[name];
    if (name === '@entity') continue;
    if (!isTable(value)) {
      list.push(`${name}: ${String(value)}`);
      continue;
    }
    for (const sub of sortedKeys(value)) {
      const item = Array.isArray(value) ? value[Number(sub) - 1] : value[sub];
      list.push(`${name}.${sub}: ${isTable(item) ? luaPretty(item) : String(item)}`);
    }
  }
  return list;
}

/** code 2, 400: the input does not validate. */
export class SchemaViolation extends KongError {
  constructor(readonly errors: FieldErrors) {
    const fields = nest(errors);
    const list = violations(fields);
    super(
      {
        code: 2,
        name: 'schema violation',
        message: list.length === 1 ? `schema violation (${list[0]})` : `${list.length} schema violations (${list.join('; ')})`,
        fields,
      },
      400,
    );
  }
}

/**
 * code 13, 400: a foreign key given by a unique field (`service: {name: ...}`) names no entity
 * (kong/db/errors.lua foreign_keys_unresolved, 3.9.3). `errors` keys are `field.key`.
 */
export class ForeignKeysUnresolved extends KongError {
  constructor(errors: FieldErrors) {
    const list = Object.entries(errors)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([path, message]) => `${path}: ${message}`);
    const message = list.length === 1 ? `foreign key unresolved (${list[0]})` : `${list.length} foreign keys unresolved (${list.join('; ')})`;
    super({ code: 13, name: 'foreign keys unresolved', message, fields: nest(errors) }, 400);
  }
}

/** Throws a SchemaViolation when `errors` has any. */
export function refuseInvalid(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw new SchemaViolation(errors);
}

/** Lua's pretty-printing of a key as Kong's messages show it: `{name="x",route=null}`. */
function pretty(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return `"${value}"`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${k}=${pretty(v)}`).join(',')}}`;
  }
  return String(value);
}

/** code 5, 409: another entity has these unique values. */
export class UniqueViolation extends KongError {
  constructor(key: Record<string, unknown>) {
    super({ code: 5, name: 'unique constraint violation', message: `UNIQUE violation detected on '${pretty(key)}'`, fields: key }, 409);
  }
}

/** code 3, 400: an insert of an id that exists (kong/db/errors.lua:265-274; endpoints.lua:28 maps it to 400). */
export class PrimaryKeyViolation extends KongError {
  constructor(key: Record<string, unknown>) {
    super({ code: 3, name: 'primary key violation', message: `primary key violation on key '${pretty(key)}'`, fields: key }, 400);
  }
}

/** code 4, 400: a foreign key names no entity, or an entity is still referenced (on_delete restrict). */
export class ForeignKeyViolation extends KongError {
  static referencedBy(referencing: string, referenced: string): ForeignKeyViolation {
    return new ForeignKeyViolation(`an existing '${referencing}' entity references this '${referenced}' entity`, { '@referenced_by': referencing });
  }

  static missing(field: string, reference: string, key: Record<string, unknown>): ForeignKeyViolation {
    const message = `the foreign key '${pretty(key)}' does not reference an existing '${reference}' entity.`;
    return new ForeignKeyViolation(message, { [field]: message });
  }

  private constructor(message: string, fields: Record<string, unknown>) {
    super({ code: 4, name: 'foreign key violation', message, fields }, 400);
  }
}

/** code 7 (offset) and 9 (size), 400: a list request Kong cannot page (no `fields`: errors.lua invalid_size). */
export class InvalidPaging extends KongError {
  constructor(name: 'invalid offset' | 'invalid size', message: string) {
    super({ code: name === 'invalid offset' ? 7 : 9, name, message }, 400);
  }
}

/** code 11, 400: a list option Kong refuses (kong/db/errors.lua invalid_options), e.g. a bad `tags` filter. */
export class InvalidOption extends KongError {
  constructor(option: string, message: string) {
    super({ code: 11, name: 'invalid options', message: `invalid option (${option}: ${message})`, options: { [option]: message } }, 400);
  }
}

/** code 1, 400: a URL key that is no UUID, for a type without an endpoint key (kong/db/errors.lua:194-202). */
export class InvalidPrimaryKey extends KongError {
  constructor() {
    const fields = { id: 'expected a valid UUID' };
    super({ code: 1, name: 'invalid primary key', message: `invalid primary key: '{id="expected a valid UUID"}'`, fields }, 400);
  }
}

/** code 10, 400: a key the URL names that its field refuses (kong/db/errors.lua:433-440 invalid_unique). */
export class InvalidUnique extends KongError {
  constructor(field: string, message: string) {
    super({ code: 10, name: `invalid unique ${field}`, message }, 400);
  }
}

/** 404 {"message":"Not found"}: the entity, or its parent, does not exist. */
export class NotFound extends Error {}

/** 405: Kong's method_not_allowed (e.g. DELETE /routes/{route}/service). */
export class MethodNotAllowed extends Error {}
