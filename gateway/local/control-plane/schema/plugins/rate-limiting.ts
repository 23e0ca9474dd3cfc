import { headerName } from '../field-schema.ts';
import { hostError } from '../hosts.ts';
import type { PluginSchema } from './plugin-schema.ts';

export const PERIODS = ['second', 'minute', 'hour', 'day', 'month', 'year'] as const;
const SYNC_RATE_REALTIME = -1;

/** kong/plugins/rate-limiting/schema.lua and kong/tools/redis/schema.lua (3.9.3). */
export const rateLimiting: PluginSchema = {
  name: 'rate-limiting',
  configFields: [
    ...PERIODS.map((period) => ({ [period]: { type: 'number' as const, gt: 0 } })),
    { limit_by: { type: 'string', default: 'consumer', one_of: ['consumer', 'credential', 'ip', 'service', 'header', 'path'] } },
    { header_name: headerName },
    { path: { type: 'string', match: /^\// } },
    { policy: { type: 'string', default: 'local', len_min: 0, one_of: ['local', 'cluster', 'redis'] } },
    { fault_tolerant: { type: 'boolean', required: true, default: true } },
    {
      redis: {
        type: 'record',
        fields: [
          { host: { type: 'string', custom: hostError } },
          { port: { type: 'integer', default: 6379, between: [0, 65535] } },
          { timeout: { type: 'integer', default: 2000, between: [0, 2147483646] } },
          { username: { type: 'string' } },
          { password: { type: 'string', len_min: 0 } },
          { database: { type: 'integer', default: 0 } },
          { ssl: { type: 'boolean', required: false, default: false } },
          { ssl_verify: { type: 'boolean', required: false, default: false } },
          { server_name: { type: 'string', required: false } },
        ],
      },
    },
    { hide_client_headers: { type: 'boolean', required: true, default: false } },
    { error_code: { type: 'number', default: 429, gt: 0 } },
    { error_message: { type: 'string', default: 'API rate limit exceeded' } },
    { sync_rate: { type: 'number', required: true, default: SYNC_RATE_REALTIME } },
  ],
  check(config) {
    if (!PERIODS.some((period) => typeof config[period] === 'number')) {
      return `at least one of these fields must be non-empty: ${PERIODS.map((p) => `'config.${p}'`).join(', ')}`;
    }
    // validate_periods_order
    for (let i = 0; i < PERIODS.length; i++) {
      const lower = config[PERIODS[i]!];
      if (typeof lower !== 'number') continue;
      for (const upper of PERIODS.slice(i + 1)) {
        const value = config[upper];
        if (typeof value === 'number' && value < lower) {
          return `The limit for ${upper}(${value.toFixed(1)}) cannot be lower than the limit for ${PERIODS[i]}(${lower.toFixed(1)})`;
        }
      }
    }
    const syncRate = config.sync_rate as number;
    if (config.policy !== 'redis' && syncRate !== SYNC_RATE_REALTIME) return 'sync_rate can only be used with the redis policy';
    if (config.policy === 'redis' && syncRate !== SYNC_RATE_REALTIME && syncRate < 0.02) {
      return 'sync_rate must be greater than 0.02, or -1 to disable';
    }
    if (config.limit_by === 'header' && !config.header_name) return 'config.header_name: required field missing';
    if (config.limit_by === 'path' && !config.path) return 'config.path: required field missing';
    if (config.policy === 'redis' && !(config.redis as { host?: string }).host) return 'config.redis.host: required field missing';
    return undefined;
  },
  unsupported(config) {
    return config.policy === 'cluster'
      ? "config.policy: 'cluster' keeps counters in Kong's database, which the local gateway does not have; use 'local' or 'redis'"
      : undefined;
  },
};
