import type { FieldSchema } from '../control-plane/schema/field-schema.ts';
import { KONG_VERSION } from '../control-plane/kong-version.ts';
import type { PluginDefinition } from './plugin.ts';

// Behaviour of kong/plugins/response-transformer/{handler,header_transformer,schema}.lua (3.9.1):
// headers only; JSON body transforms are refused at load.
const COLON_PAIR = /^[^:]+:.*$/;
const pairs: FieldSchema = { type: 'array', default: [], required: true, elements: { type: 'string', match: COLON_PAIR } };
const names: FieldSchema = { type: 'array', default: [], required: true, elements: { type: 'string' } };
const jsonTypes: FieldSchema = { type: 'array', default: [], required: true, elements: { type: 'string', one_of: ['boolean', 'number', 'string'] } };

const section = (withTypes: boolean, headerList: FieldSchema, jsonList: FieldSchema): FieldSchema => ({
  type: 'record',
  required: true,
  fields: [{ json: jsonList }, ...(withTypes ? [{ json_types: jsonTypes }] : []), { headers: headerList }],
});

/** `name:value` as header_transformer.lua's iter() splits it; an empty value is nil. */
function split(entry: string): [string, string | undefined] {
  const match = /^([^:]+):*(.*)$/s.exec(entry)!;
  return [match[1]!, match[2] === '' ? undefined : match[2]];
}

const list = (config: Record<string, unknown>, key: string, field: 'headers' | 'json') =>
  (config[key] as Record<string, string[]>)[field] ?? [];

export const responseTransformer: PluginDefinition = {
  name: 'response-transformer',
  priority: 800,
  version: KONG_VERSION,
  configFields: [
    { remove: section(false, names, names) },
    { rename: section(false, pairs, pairs) },
    { replace: section(true, pairs, pairs) },
    { add: section(true, pairs, pairs) },
    { append: section(true, pairs, pairs) },
  ],
  unsupported(config) {
    for (const key of ['remove', 'rename', 'replace', 'add', 'append']) {
      if (list(config, key, 'json').length > 0) return `config.${key}.json: JSON body transforms are not implemented`;
    }
    return undefined;
  },
  header_filter(ctx, config) {
    // `headers` is the snapshot taken before any change, as in the Lua handler.
    const before = new Map(ctx.responseHeaders);
    const has = (name: string) => before.has(name.toLowerCase());
    for (const entry of list(config, 'remove', 'headers')) ctx.clearResponseHeader(split(entry)[0]);
    for (const entry of list(config, 'rename', 'headers')) {
      const [oldName, newName] = split(entry);
      if (has(oldName) && newName) {
        ctx.setResponseHeader(newName, before.get(oldName.toLowerCase())!);
        ctx.clearResponseHeader(oldName);
      }
    }
    for (const entry of list(config, 'replace', 'headers')) {
      const [name, value] = split(entry);
      if (has(name) && value) ctx.setResponseHeader(name, value);
    }
    for (const entry of list(config, 'add', 'headers')) {
      const [name, value] = split(entry);
      if (!has(name) && value) ctx.setResponseHeader(name, value);
    }
    for (const entry of list(config, 'append', 'headers')) {
      const [name, value] = split(entry);
      if (value !== undefined) ctx.addResponseHeader(name, value);
    }
  },
};
