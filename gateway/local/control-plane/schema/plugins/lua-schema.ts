import type { TObject, TProperties, TSchema } from '@sinclair/typebox';
import * as T from '../typedefs.ts';
import { configRecord } from './plugin-schema.ts';
import { TYPEDEF_CHECKS } from './typedef-checks.ts';

/**
 * Converts the `fields` of a plugin's schema.lua (Kong's schema DSL, already JSON-encoded by the
 * VM) into the gateway's schemas (typedefs.ts). Anything this reading does not understand is refused by
 * name rather than skipped.
 */
const SUPPORTED_KEYS = new Set([
  'type', 'required', 'default', 'one_of', 'between', 'gt', 'len_min', 'match', 'elements', 'fields', 'keys', 'values',
  'description', 'referenceable', 'encrypted', 'typedef', 'starts_with', 'match_none', 'uuid',
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type LuaField = Record<string, unknown>;

function convert(plugin: string, path: string, field: LuaField): TSchema {
  for (const key of Object.keys(field)) {
    if (!SUPPORTED_KEYS.has(key)) throw new Error(`plugin ${plugin}: schema field ${path} uses '${key}', which the local gateway does not implement`);
  }
  const schema = convertType(plugin, path, field, typeof field.type === 'string' ? field.type : '');
  return field.default === undefined || field.default === null ? schema : T.withDefault(schema, field.default);
}

function convertType(plugin: string, path: string, field: LuaField, type: string): TSchema {
  const common = typeof field.required === 'boolean' ? { required: field.required } : {};
  const checks = stringChecks(plugin, path, field);
  switch (type) {
    case 'string':
      return T.string({
        ...common,
        ...(Array.isArray(field.one_of) ? { one_of: field.one_of as string[] } : {}),
        ...(typeof field.len_min === 'number' ? { len_min: field.len_min } : {}),
        ...(typeof field.match === 'string' ? { match: luaPatternToRegExp(plugin, path, field.match) } : {}),
        ...(checks.length > 0 ? { custom: (value: string) => checks.map((check) => check(value)).find((e) => e !== undefined) } : {}),
      });
    case 'integer':
    case 'number': {
      const attributes = {
        ...common,
        ...(Array.isArray(field.one_of) ? { one_of: field.one_of as number[] } : {}),
        ...(Array.isArray(field.between) ? { between: field.between as [number, number] } : {}),
        ...(typeof field.gt === 'number' ? { gt: field.gt } : {}),
      };
      return type === 'integer' ? T.integer(attributes) : T.number(attributes);
    }
    case 'boolean':
      return T.boolean(common);
    case 'array':
    case 'set': {
      const elements = isLuaField(field.elements) ? convert(plugin, `${path}[]`, field.elements) : T.string();
      const attributes = { ...common, ...(typeof field.len_min === 'number' ? { len_min: field.len_min } : {}) };
      return type === 'set' ? T.set(elements, attributes) : T.array(elements, attributes);
    }
    case 'map': {
      const keys = isLuaField(field.keys) ? convert(plugin, `${path}{key}`, field.keys) : T.string();
      const values = isLuaField(field.values) ? convert(plugin, `${path}{value}`, field.values) : T.string();
      return T.map(keys, values, common);
    }
    case 'record':
      return T.record(convertFields(plugin, path, field.fields ?? []), common);
    default:
      throw new Error(`plugin ${plugin}: schema field ${path} has unsupported type '${String(field.type)}'`);
  }
}

const isLuaField = (value: unknown): value is LuaField => typeof value === 'object' && value !== null && !Array.isArray(value);

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

function convertFields(plugin: string, path: string, fields: unknown): TProperties {
  // An empty Lua table reaches JS as {}: `fields = {}` is a record without fields, as Kong reads it.
  if (isEmptyObject(fields)) return {};
  if (!Array.isArray(fields)) throw new Error(`plugin ${plugin}: ${path}.fields must be an array`);
  const properties: TProperties = {};
  for (const entry of fields as unknown[]) {
    const names = isLuaField(entry) ? Object.keys(entry) : [];
    const field = names.length === 1 ? (entry as Record<string, unknown>)[names[0]!] : undefined;
    if (!isLuaField(field)) throw new Error(`plugin ${plugin}: each entry of ${path}.fields must name one field`);
    properties[names[0]!] = convert(plugin, path ? `${path}.${names[0]!}` : names[0]!, field);
  }
  return properties;
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
  config: TObject;
  protocols?: TSchema;
  noConsumer: boolean;
  noRoute: boolean;
  noService: boolean;
}

/** Reads the top-level fields: `config` (a record), `protocols` (a set), and the no_* foreign typedefs. */
export function fieldsFromLuaSchema(plugin: string, fields: unknown): ConvertedSchema {
  if (!Array.isArray(fields)) throw new Error(`plugin ${plugin}: schema.lua must have a fields array`);
  const result: ConvertedSchema = { config: configRecord({}), noConsumer: false, noRoute: false, noService: false };
  for (const entry of fields as Array<Record<string, LuaField>>) {
    for (const [name, field] of Object.entries(entry)) {
      if (name === 'config') {
        if (field.type !== 'record') throw new Error(`plugin ${plugin}: config must be a record`);
        result.config = configRecord(convertFields(plugin, 'config', field.fields ?? []));
      } else if (name === 'protocols') {
        if (field.type !== 'set') throw new Error(`plugin ${plugin}: protocols must be a set`);
        result.protocols = convert(plugin, 'protocols', field);
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
