import * as T from '../typedefs.ts';
import { configRecord, definePlugin } from './plugin-schema.ts';

/** kong/plugins/request-size-limiting/schema.lua (3.9.3). */
export const requestSizeLimiting = definePlugin({
  name: 'request-size-limiting',
  protocols: T.protocolsHttp(),
  config: configRecord({
    allowed_payload_size: T.integer({ default: 128 }),
    size_unit: T.string({ required: true, default: 'megabytes', one_of: ['megabytes', 'kilobytes', 'bytes'] }),
    require_content_length: T.boolean({ required: true, default: false }),
  }),
});
