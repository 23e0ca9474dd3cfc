import * as T from '../typedefs.ts';
import { configRecord, definePlugin } from './plugin-schema.ts';

/**
 * kong/plugins/prometheus/schema.lua (3.9.3). Its custom_validator (the `prometheus_metrics`
 * shared dict must exist) always holds here: every data-plane node declares the dict.
 * upstream_health_metrics and ai_metrics are accepted as on Kong: the data plane runs no upstream
 * entities and no AI plugins, so they export nothing, as they would on a Kong without either.
 */
export const prometheus = definePlugin({
  name: 'prometheus',
  protocols: T.protocols(),
  config: configRecord({
    per_consumer: T.boolean({ default: false }),
    status_code_metrics: T.boolean({ default: false }),
    ai_metrics: T.boolean({ default: false }),
    latency_metrics: T.boolean({ default: false }),
    bandwidth_metrics: T.boolean({ default: false }),
    upstream_health_metrics: T.boolean({ default: false }),
  }),
});
