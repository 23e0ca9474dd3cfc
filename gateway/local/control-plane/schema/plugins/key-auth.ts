import { headerName } from '../field-schema.ts';
import type { PluginSchema } from './plugin-schema.ts';

/** kong/plugins/key-auth/schema.lua (3.9.3). */
export const keyAuth: PluginSchema = {
  name: 'key-auth',
  noConsumer: true,
  configFields: [
    { key_names: { type: 'array', required: true, elements: headerName, default: ['apikey'] } },
    { hide_credentials: { type: 'boolean', required: true, default: false } },
    { anonymous: { type: 'string' } },
    { key_in_header: { type: 'boolean', required: true, default: true } },
    { key_in_query: { type: 'boolean', required: true, default: true } },
    { key_in_body: { type: 'boolean', required: true, default: false } },
    { run_on_preflight: { type: 'boolean', required: true, default: true } },
    { realm: { type: 'string', required: false } },
  ],
  unsupported(config) {
    return config.key_in_body ? 'config.key_in_body: reading keys from request bodies is not implemented' : undefined;
  },
};
