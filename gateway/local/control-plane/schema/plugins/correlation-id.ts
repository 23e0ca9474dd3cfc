import * as T from '../typedefs.ts';
import { configRecord, definePlugin } from './plugin-schema.ts';

/** kong/plugins/correlation-id/schema.lua (3.9.3). */
export const correlationId = definePlugin({
  name: 'correlation-id',
  protocols: T.protocolsHttp(),
  config: configRecord({
    header_name: T.string({ default: 'Kong-Request-ID' }),
    generator: T.string({ default: 'uuid#counter', required: true, one_of: ['uuid', 'uuid#counter', 'tracker'] }),
    echo_downstream: T.boolean({ required: true, default: false }),
  }),
});
