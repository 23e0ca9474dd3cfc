import type { TSchema } from '@sinclair/typebox';
import { hostError, sniError } from '../hosts.ts';
import * as T from '../typedefs.ts';
import { pathError } from '../url-path.ts';
import { configRecord, definePlugin, headerName, type DeprecatedShorthand } from './plugin-schema.ts';

export const PERIODS = ['second', 'minute', 'hour', 'day', 'month', 'year'] as const;
const SYNC_RATE_REALTIME = -1;
const limit = () => T.number({ gt: 0 });

/** config.redis_<name>, deprecated for config.redis.<name> until Kong 4.0 (schema.lua:101-194). */
const redisShorthand = (name: string, field: TSchema): DeprecatedShorthand => ({
  name: `redis_${name}`,
  field,
  replacedWith: ['redis', name],
  message: `rate-limiting: config.redis_${name} is deprecated, please use config.redis.${name} instead`,
  removalInVersion: '4.0',
});

/** kong/plugins/rate-limiting/schema.lua and kong/tools/redis/schema.lua (3.9.3). */
export const rateLimiting = definePlugin({
  name: 'rate-limiting',
  protocols: T.protocolsHttp(),
  config: configRecord({
    second: limit(),
    minute: limit(),
    hour: limit(),
    day: limit(),
    month: limit(),
    year: limit(),
    limit_by: T.string({ default: 'consumer', one_of: ['consumer', 'credential', 'ip', 'service', 'header', 'path'] }),
    header_name: headerName(),
    path: T.string({ starts_with: '/', custom: pathError }),
    policy: T.string({ default: 'local', len_min: 0, one_of: ['local', 'cluster', 'redis'] }),
    fault_tolerant: T.boolean({ required: true, default: true }),
    redis: T.record(
      {
        host: T.string({ custom: hostError }),
        port: T.integer({ default: 6379, between: [0, 65535] }),
        timeout: T.integer({ default: 2000, between: [0, 2147483646] }),
        username: T.string(),
        password: T.string({ len_min: 0 }),
        database: T.integer({ default: 0 }),
        ssl: T.boolean({ required: false, default: false }),
        ssl_verify: T.boolean({ required: false, default: false }),
        server_name: T.string({ required: false, custom: sniError }),
      },
      { required: true },
    ),
    hide_client_headers: T.boolean({ required: true, default: false }),
    error_code: T.number({ default: 429, gt: 0 }),
    error_message: T.string({ default: 'API rate limit exceeded' }),
    sync_rate: T.number({ required: true, default: SYNC_RATE_REALTIME }),
  }),
  shorthands: [
    redisShorthand('host', T.string()),
    redisShorthand('port', T.integer()),
    redisShorthand('password', T.string({ len_min: 0 })),
    redisShorthand('username', T.string()),
    redisShorthand('ssl', T.boolean()),
    redisShorthand('ssl_verify', T.boolean()),
    redisShorthand('server_name', T.string()),
    redisShorthand('timeout', T.integer()),
    redisShorthand('database', T.integer()),
  ],
  check(config) {
    return PERIODS.some((period) => config[period] !== null)
      ? undefined
      : `at least one of these fields must be non-empty: ${PERIODS.map((p) => `'config.${p}'`).join(', ')}`;
  },
  conditionals: [
    { ifField: 'config.policy', eq: 'redis', thenField: 'config.redis.host' },
    { ifField: 'config.policy', eq: 'redis', thenField: 'config.redis.port' },
    { ifField: 'config.policy', eq: 'redis', thenField: 'config.redis.timeout' },
    { ifField: 'config.limit_by', eq: 'header', thenField: 'config.header_name' },
    { ifField: 'config.limit_by', eq: 'path', thenField: 'config.path' },
  ],
  // validate_periods_order (schema.lua:10-36)
  customValidator(config) {
    for (const [i, period] of PERIODS.entries()) {
      const lower = config[period];
      if (lower === null) continue;
      for (const upper of PERIODS.slice(i + 1)) {
        const value = config[upper];
        if (value !== null && value < lower) {
          return `The limit for ${upper}(${value.toFixed(1)}) cannot be lower than the limit for ${period}(${lower.toFixed(1)})`;
        }
      }
    }
    if (config.policy !== 'redis' && config.sync_rate !== SYNC_RATE_REALTIME) return 'sync_rate can only be used with the redis policy';
    if (config.policy === 'redis' && config.sync_rate !== SYNC_RATE_REALTIME && config.sync_rate < 0.02) {
      return 'sync_rate must be greater than 0.02, or -1 to disable';
    }
    return undefined;
  },
  unsupported(config) {
    return config.policy === 'cluster'
      ? "config.policy: 'cluster' keeps counters in Kong's database, which the local gateway does not have; use 'local' or 'redis'"
      : undefined;
  },
});
