import * as T from '../typedefs.ts';
import { configRecord, definePlugin, headerName } from './plugin-schema.ts';

/** kong/plugins/key-auth/schema.lua (3.9.3). */
export const keyAuth = definePlugin({
  name: 'key-auth',
  noConsumer: true,
  protocols: T.protocolsHttp(),
  config: configRecord({
    key_names: T.array(headerName(), { required: true, default: ['apikey'] }),
    hide_credentials: T.boolean({ required: true, default: false }),
    anonymous: T.string(),
    key_in_header: T.boolean({ required: true, default: true }),
    key_in_query: T.boolean({ required: true, default: true }),
    key_in_body: T.boolean({ required: true, default: false }),
    run_on_preflight: T.boolean({ required: true, default: true }),
    realm: T.string({ required: false }),
  }),
  unsupported(config) {
    return config.key_in_body ? 'config.key_in_body: reading keys from request bodies is not implemented' : undefined;
  },
});
