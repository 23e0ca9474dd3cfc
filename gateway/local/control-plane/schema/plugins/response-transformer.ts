import * as T from '../typedefs.ts';
import { configRecord, definePlugin } from './plugin-schema.ts';
import { headerNameError } from './typedef-checks.ts';

const COLON_PAIR = /^[^:]+:.*$/;
const list = (elements: ReturnType<typeof element>) => T.array(elements, { default: [], required: true });
const element = (match?: RegExp) => T.string(match ? { match } : {});

/** validate_colon_headers (schema.lua:5-22): `name:new-name`, both header names, the colons between them dropped (`:*`). */
function colonHeadersError(pair: string): string | undefined {
  const [, name = '', value = ''] = /^([^:]+):*(.*)$/s.exec(pair) ?? [];
  const invalid = [name, value].find((header) => header === '' || headerNameError(header) !== undefined);
  return invalid === undefined ? undefined : `'${invalid}' is not a valid header`;
}
const jsonTypes = () => T.array(T.string({ one_of: ['boolean', 'number', 'string'] }), { default: [], required: true });

const names = () => T.record({ json: list(element()), headers: list(element()) }, { required: true });
const headerPairs = () => list(T.string({ match: COLON_PAIR, custom: colonHeadersError }));
const renames = () => T.record({ json: list(element(COLON_PAIR)), headers: headerPairs() }, { required: true });
const typedPairs = () =>
  T.record({ json: list(element(COLON_PAIR)), json_types: jsonTypes(), headers: list(element(COLON_PAIR)) }, { required: true });

/** kong/plugins/response-transformer/schema.lua (3.9.3). */
export const responseTransformer = definePlugin({
  name: 'response-transformer',
  protocols: T.protocolsHttp(),
  config: configRecord({
    remove: names(),
    rename: renames(),
    replace: typedPairs(),
    add: typedPairs(),
    append: typedPairs(),
  }),
});
