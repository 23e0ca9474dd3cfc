import type { FieldSchema } from '../field-schema.ts';
import { TYPEDEF_CHECKS } from './typedef-checks.ts';

/**
 * Converts the `fields` of a plugin's schema.lua (Kong's schema DSL, already JSON-encoded by the
 * VM) into the gateway's FieldSchema. Anything this reading does not understand is refused by
 * name rather than skipped.
 */
const SUPPORTED_KEYS = new Set([
  'type', 'required', 'default', 'one_of', 'between', 'gt', 'len_min', 'match', 'elements', 'fields', 'keys', 'values',
  'description', 'referenceable', 'encrypted', 'typedef', 'starts_with', 'match_none', 'uuid',
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TYPES = new Set(['string', 'boolean', 'integer', 'number', 'array', 'set', 'record', 'map']);

type LuaField = Record<string, unknown>;

function convert(plugin: string, path: string, field: LuaField): FieldSchema {
  for (const key of Object.keys(field)) {
    if (!SUPPORTED_KEYS.has(key)) throw new Error(`plugin ${plugin}: schema field ${path} uses '${key}', which the local gateway does not implement`);
  }
  if (!TYPES.has(field.type as string)) throw new Error(`plugin ${plugin}: schema field ${path} has unsupported type '${String(field.type)}'`);
  const schema: FieldSchema = { type: field.type as FieldSchema['type'] };
  if (field.required !== undefined) schema.required = field.required as boolean;
  if (field.default !== undefined && field.default !== null) schema.default = field.default;
  if (field.one_of) schema.one_of = field.one_of as string[];
  if (field.between) schema.between = field.between as [number, number];
  if (field.gt !== undefined) schema.gt = field.gt as number;
  if (field.len_min !== undefined) schema.len_min = field.len_min as number;
  if (field.match !== undefined) schema.match = luaPatternToRegExp(plugin, path, field.match as string);
  const checks = stringChecks(plugin, path, field);
  if (checks.length > 0) schema.custom = (value) => checks.map((check) => check(value)).find((error) => error !== undefined);
  if (field.elements) schema.elements = convert(plugin, `${path}[]`, field.elements as LuaField);
  if (field.keys) schema.keys = convert(plugin, `${path}{key}`, field.keys as LuaField);
  if (field.values) schema.values = convert(plugin, `${path}{value}`, field.values as LuaField);
  if (field.fields) schema.fields = convertFields(plugin, path, field.fields);
  return schema;
}

/** starts_with, match_none, uuid and the named typedef check, as string validators. */
function stringChecks(plugin: string, path: string, field: LuaField): Array<(value: string) => string | undefined> {
  const checks: Array<(value: string) => string | undefined> = [];
  if (typeof field.starts_with === 'string') {
    const prefix = field.starts_with;
    checks.push((value) => (value.startsWith(prefix) ? undefined : `should start with: ${prefix}`));
  }
  for (const rule of (field.match_none as Array<{ pattern: string; err?: string }> | undefined) ?? []) {
    const pattern = luaPatternToRegExp(plugin, path, rule.pattern);
    checks.push((value) => (pattern.test(value) ? (rule.err ?? `invalid value: ${value}`) : undefined));
  }
  if (field.uuid === true) checks.push((value) => (UUID.test(value) ? undefined : 'expected a valid UUID'));
  if (field.typedef !== undefined) {
    const check = TYPEDEF_CHECKS[field.typedef as string];
    if (!check) throw new Error(`plugin ${plugin}: schema field ${path} uses typedef '${String(field.typedef)}', which the local gateway does not implement`);
    checks.push(check);
  }
  return checks;
}

function convertFields(plugin: string, path: string, fields: unknown): Array<Record<string, FieldSchema>> {
  // An empty Lua table reaches JS as {}: `fields = {}` is a record without fields, as Kong reads it.
  if (isEmptyObject(fields)) return [];
  if (!Array.isArray(fields)) throw new Error(`plugin ${plugin}: ${path}.fields must be an array`);
  return fields.map((entry: Record<string, LuaField>) => {
    const [name, ...rest] = Object.keys(entry);
    if (!name || rest.length > 0) throw new Error(`plugin ${plugin}: each entry of ${path}.fields must name one field`);
    return { [name]: convert(plugin, path ? `${path}.${name}` : name, entry[name]!) };
  });
}

/** Lua patterns used in schemas are simple; this translates the common subset and refuses the rest. */
function luaPatternToRegExp(plugin: string, path: string, pattern: string): RegExp {
  if (/%[bf]/.test(pattern)) throw new Error(`plugin ${plugin}: ${path}.match uses a Lua pattern item the local gateway cannot translate`);
  const classes: Record<string, string> = { a: 'A-Za-z', d: '0-9', l: 'a-z', u: 'A-Z', w: 'A-Za-z0-9', s: '\\s', x: '0-9A-Fa-f', p: '!-/:-@\\[-`{-~' };
  let out = '';
  let inSet = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '%') {
      const next = pattern[++i]!;
      const cls = classes[next.toLowerCase()];
      if (cls) {
        const negated = next !== next.toLowerCase();
        out += inSet ? cls : negated ? `[^${cls}]` : `[${cls}]`;
      } else {
        out += `\\${next}`;
      }
    } else if (c === '[') {
      inSet = true;
      out += c;
    } else if (c === ']') {
      inSet = false;
      out += c;
    } else if (c === '-' && !inSet) {
      out += '*?';
    } else {
      out += c;
    }
  }
  return new RegExp(out);
}

export interface ConvertedSchema {
  config: Array<Record<string, FieldSchema>>;
  noConsumer: boolean;
  noRoute: boolean;
  noService: boolean;
}

/** Reads the top-level fields: `config` (a record), `protocols`, and the no_* foreign typedefs. */
export function fieldsFromLuaSchema(plugin: string, fields: unknown): ConvertedSchema {
  if (!Array.isArray(fields)) throw new Error(`plugin ${plugin}: schema.lua must have a fields array`);
  const result: ConvertedSchema = { config: [], noConsumer: false, noRoute: false, noService: false };
  for (const entry of fields as Array<Record<string, LuaField>>) {
    for (const [name, field] of Object.entries(entry)) {
      if (name === 'config') {
        if (field.type !== 'record') throw new Error(`plugin ${plugin}: config must be a record`);
        result.config = convertFields(plugin, 'config', field.fields ?? []);
      } else if (name === 'protocols') {
        continue;
      } else if (field.type === 'foreign' && ['consumer', 'route', 'service'].includes(name)) {
        if (name === 'consumer') result.noConsumer = true;
        if (name === 'route') result.noRoute = true;
        if (name === 'service') result.noService = true;
      } else {
        throw new Error(`plugin ${plugin}: top-level schema field '${name}' is not supported by the local gateway`);
      }
    }
  }
  return result;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
