import type { PluginSchema } from './plugin-schema.ts';

/**
 * kong/plugins/prometheus/schema.lua (3.9.3). Its custom_validator (the `prometheus_metrics`
 * shared dict must exist) always holds here: every data-plane node declares the dict.
 * upstream_health_metrics and ai_metrics are accepted as on Kong: the data plane runs no upstream
 * entities and no AI plugins, so they export nothing, as they would on a Kong without either.
 */
export const prometheus: PluginSchema = {
  name: 'prometheus',
  configFields: [
    { per_consumer: { type: 'boolean', default: false } },
    { status_code_metrics: { type: 'boolean', default: false } },
    { ai_metrics: { type: 'boolean', default: false } },
    { latency_metrics: { type: 'boolean', default: false } },
    { bandwidth_metrics: { type: 'boolean', default: false } },
    { upstream_health_metrics: { type: 'boolean', default: false } },
  ],
};
