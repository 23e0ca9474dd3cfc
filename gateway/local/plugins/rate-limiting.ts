import { headerName } from '../control-plane/schema/field-schema.ts';
import { KONG_VERSION } from '../control-plane/kong-version.ts';
import type { RequestContext } from '../proxy/request-context.ts';
import type { PluginConfig, PluginDefinition } from './plugin.ts';

// Behaviour of kong/plugins/rate-limiting/{handler,schema,expiration}.lua and
// policies/init.lua (local policy), Kong 3.9.1.
export const PERIODS = ['second', 'minute', 'hour', 'day', 'month', 'year'] as const;
export type Period = (typeof PERIODS)[number];

/** kong/plugins/rate-limiting/expiration.lua: a "month" is 30 days, a "year" 365, for Reset. */
export const EXPIRATION: Record<Period, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86400,
  month: 2592000,
  year: 31536000,
};

const capitalised = (period: Period) => period[0]!.toUpperCase() + period.slice(1);
const LIMIT_HEADER = Object.fromEntries(PERIODS.map((p) => [p, `X-RateLimit-Limit-${capitalised(p)}`])) as Record<Period, string>;
const REMAINING_HEADER = Object.fromEntries(PERIODS.map((p) => [p, `X-RateLimit-Remaining-${capitalised(p)}`])) as Record<Period, string>;
const EMPTY_UUID = '00000000-0000-0000-0000-000000000000';

// Every request of the same second shares its period starts.
let lastStarts: Readonly<Record<Period, number>> = { second: NaN, minute: NaN, hour: NaN, day: NaN, month: NaN, year: NaN };

/** kong/tools/timestamp.lua get_timestamps: the UTC start of each period containing `nowMs`. */
export function periodStarts(nowMs: number): Readonly<Record<Period, number>> {
  const second = Math.floor(nowMs / 1000) * 1000;
  if (second === lastStarts.second) return lastStarts;
  const d = new Date(second);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  const day = d.getUTCDate();
  const h = d.getUTCHours();
  const mi = d.getUTCMinutes();
  lastStarts = Object.freeze({
    second,
    minute: Date.UTC(y, mo, day, h, mi),
    hour: Date.UTC(y, mo, day, h),
    day: Date.UTC(y, mo, day),
    month: Date.UTC(y, mo, 1),
    year: Date.UTC(y, 0, 1),
  });
  return lastStarts;
}

function identifierFor(ctx: RequestContext, config: PluginConfig): string {
  let identifier: string | undefined;
  switch (config.limit_by) {
    case 'service':
      identifier = ctx.service?.id;
      break;
    case 'consumer':
      identifier = ctx.consumer?.id ?? ctx.credential?.id;
      break;
    case 'credential':
      identifier = ctx.credential?.id;
      break;
    case 'header':
      identifier = ctx.getHeader(config.header_name as string);
      break;
    case 'path':
      if (ctx.path === config.path) identifier = ctx.path;
      break;
  }
  return identifier ?? ctx.clientIp;
}

function counterKey(config: PluginConfig, identifier: string, period: Period, periodStart: number): string {
  return `ratelimit:${config.__route_id ?? EMPTY_UUID}:${config.__service_id ?? EMPTY_UUID}:${identifier}:${periodStart}:${period}`;
}

export const rateLimiting: PluginDefinition = {
  name: 'rate-limiting',
  priority: 910,
  version: KONG_VERSION,
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
          { host: { type: 'string' } },
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
    { sync_rate: { type: 'number', required: true, default: -1 } },
  ],
  check(config) {
    if (!PERIODS.some((period) => typeof config[period] === 'number')) {
      return `at least one of these fields must be non-empty: ${PERIODS.map((p) => `'config.${p}'`).join(', ')}`;
    }
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
    if (config.policy !== 'redis' && config.sync_rate !== -1) return 'sync_rate can only be used with the redis policy';
    if (config.limit_by === 'header' && !config.header_name) return "config.header_name: required field missing";
    if (config.limit_by === 'path' && !config.path) return "config.path: required field missing";
    if (config.policy === 'redis' && !(config.redis as { host?: string }).host) return 'config.redis.host: required field missing';
    return undefined;
  },
  unsupported(config) {
    return config.policy === 'local'
      ? undefined
      : `config.policy: '${String(config.policy)}' needs a shared store; the local gateway is one node and runs policy 'local' only`;
  },
  access(ctx, config, env) {
    // Kong uses ngx.time(): whole seconds.
    const now = Math.floor(env.now() / 1000) * 1000;
    const identifier = identifierFor(ctx, config);
    const starts = periodStarts(now);
    const usage: Array<{ period: Period; limit: number; remaining: number; key: string }> = [];
    let stop: Period | undefined;
    for (const period of PERIODS) {
      const limit = config[period];
      if (typeof limit !== 'number') continue;
      const key = counterKey(config, identifier, period, starts[period]);
      const remaining = limit - env.counters.get(key);
      usage.push({ period, limit, remaining, key });
      if (remaining <= 0) stop = period;
    }

    // kong/pdk/private/rate_limiting.lua stores the headers in the request's context and applies
    // them before the phase ends: the same headers in the same order, set directly here.
    if (!config.hide_client_headers) {
      let reset = 0;
      let best: { limit: number; window: number; remaining: number } | undefined;
      for (const { period, limit, remaining: raw } of usage) {
        const window = EXPIRATION[period];
        const remaining = Math.max(0, stop === undefined || stop === period ? raw - 1 : raw);
        if (!best || remaining < best.remaining || (remaining === best.remaining && window > best.window)) {
          best = { limit, window, remaining };
          reset = Math.max(1, window - Math.floor((now - starts[period]) / 1000));
        }
        ctx.setResponseHeader(LIMIT_HEADER[period], String(limit));
        ctx.setResponseHeader(REMAINING_HEADER[period], String(remaining));
      }
      ctx.setResponseHeader('RateLimit-Limit', String(best!.limit));
      ctx.setResponseHeader('RateLimit-Remaining', String(best!.remaining));
      ctx.setResponseHeader('RateLimit-Reset', String(reset));
      if (stop) ctx.setResponseHeader('Retry-After', String(reset));
    }
    if (stop) ctx.error(config.error_code as number, config.error_message as string);

    // Kong increments from a zero-delay timer after the check; here it happens right after.
    for (const { period, key } of usage) env.counters.increment(key, 1, EXPIRATION[period]);
  },
};
