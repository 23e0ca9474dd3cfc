import type { PluginSchema } from './plugin-schema.ts';

/** kong/plugins/correlation-id/schema.lua (3.9.3). */
export const correlationId: PluginSchema = {
  name: 'correlation-id',
  configFields: [
    { header_name: { type: 'string', default: 'Kong-Request-ID' } },
    { generator: { type: 'string', default: 'uuid#counter', required: true, one_of: ['uuid', 'uuid#counter', 'tracker'] } },
    { echo_downstream: { type: 'boolean', required: true, default: false } },
  ],
};
