import type { PluginSchema } from './plugin-schema.ts';

/** kong/plugins/request-size-limiting/schema.lua (3.9.3). */
export const requestSizeLimiting: PluginSchema = {
  name: 'request-size-limiting',
  configFields: [
    { allowed_payload_size: { type: 'integer', default: 128 } },
    { size_unit: { type: 'string', required: true, default: 'megabytes', one_of: ['megabytes', 'kilobytes', 'bytes'] } },
    { require_content_length: { type: 'boolean', required: true, default: false } },
  ],
};
