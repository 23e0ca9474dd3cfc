import type { FieldSchema } from '../field-schema.ts';
import type { PluginSchema } from './plugin-schema.ts';

const COLON_PAIR = /^[^:]+:.*$/;
const pairs: FieldSchema = { type: 'array', default: [], required: true, elements: { type: 'string', match: COLON_PAIR } };
const names: FieldSchema = { type: 'array', default: [], required: true, elements: { type: 'string' } };
const jsonTypes: FieldSchema = { type: 'array', default: [], required: true, elements: { type: 'string', one_of: ['boolean', 'number', 'string'] } };

const section = (withTypes: boolean, headerList: FieldSchema, jsonList: FieldSchema): FieldSchema => ({
  type: 'record',
  required: true,
  fields: [{ json: jsonList }, ...(withTypes ? [{ json_types: jsonTypes }] : []), { headers: headerList }],
});

/** kong/plugins/response-transformer/schema.lua (3.9.3). */
export const responseTransformer: PluginSchema = {
  name: 'response-transformer',
  configFields: [
    { remove: section(false, names, names) },
    { rename: section(false, pairs, pairs) },
    { replace: section(true, pairs, pairs) },
    { add: section(true, pairs, pairs) },
    { append: section(true, pairs, pairs) },
  ],
};
