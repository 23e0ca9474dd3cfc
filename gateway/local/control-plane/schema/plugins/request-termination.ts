import * as T from '../typedefs.ts';
import { configRecord, definePlugin, headerName } from './plugin-schema.ts';

const present = (value: string | null) => typeof value === 'string' && value.length > 0;

/** kong/plugins/request-termination/schema.lua (3.9.3). */
export const requestTermination = definePlugin({
  name: 'request-termination',
  protocols: T.protocolsHttp(),
  config: configRecord({
    status_code: T.integer({ required: true, default: 503, between: [100, 599] }),
    message: T.string(),
    content_type: T.string(),
    body: T.string(),
    echo: T.boolean({ required: true, default: false }),
    trigger: headerName(),
  }),
  customValidator(config) {
    if (present(config.message) && (present(config.content_type) || present(config.body))) {
      return 'message cannot be used with content_type or body';
    }
    if (present(config.content_type) && !present(config.body)) return 'content_type requires a body';
    if (config.echo && (present(config.content_type) || present(config.body))) {
      return 'echo cannot be used with content_type and body';
    }
    return undefined;
  },
});
