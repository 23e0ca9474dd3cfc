import * as T from '../typedefs.ts';
import { configRecord, definePlugin } from './plugin-schema.ts';

const COLON_PAIR = /^[^:]+:.*$/;
const list = (elements: ReturnType<typeof element>) => T.array(elements, { default: [], required: true });
const element = (match?: RegExp) => T.string(match ? { match } : {});
const jsonTypes = () => T.array(T.string({ one_of: ['boolean', 'number', 'string'] }), { default: [], required: true });

const names = () => T.record({ json: list(element()), headers: list(element()) }, { required: true });
const pairs = () => T.record({ json: list(element(COLON_PAIR)), headers: list(element(COLON_PAIR)) }, { required: true });
const typedPairs = () =>
  T.record({ json: list(element(COLON_PAIR)), json_types: jsonTypes(), headers: list(element(COLON_PAIR)) }, { required: true });

/** kong/plugins/response-transformer/schema.lua (3.9.3). */
export const responseTransformer = definePlugin({
  name: 'response-transformer',
  protocols: T.protocolsHttp(),
  config: configRecord({
    remove: names(),
    rename: pairs(),
    replace: typedPairs(),
    add: typedPairs(),
    append: typedPairs(),
  }),
});
