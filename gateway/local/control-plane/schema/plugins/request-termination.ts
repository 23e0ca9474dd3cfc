import { headerName } from '../field-schema.ts';
import type { PluginSchema } from './plugin-schema.ts';

const present = (value: unknown) => typeof value === 'string' && value.length > 0;

/** kong/plugins/request-termination/schema.lua (3.9.3). */
export const requestTermination: PluginSchema = {
  name: 'request-termination',
  configFields: [
    { status_code: { type: 'integer', required: true, default: 503, between: [100, 599] } },
    { message: { type: 'string' } },
    { content_type: { type: 'string' } },
    { body: { type: 'string' } },
    { echo: { type: 'boolean', required: true, default: false } },
    { trigger: headerName },
  ],
  check(config) {
    if (present(config.message) && (present(config.content_type) || present(config.body))) {
      return 'message cannot be used with content_type or body';
    }
    if (present(config.content_type) && !present(config.body)) return 'content_type requires a body';
    if (config.echo && (present(config.content_type) || present(config.body))) {
      return 'echo cannot be used with content_type and body';
    }
    return undefined;
  },
};
