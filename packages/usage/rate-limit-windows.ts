import type { Plugin } from '../provisioning/index.ts';
import { isoSeconds } from './time-windows.ts';

/** What rate-limiting puts for a route or service a plugin is not scoped to (policies/init.lua, get_service_and_route_ids). */
export const EMPTY_UUID = '00000000-0000-0000-0000-000000000000';
const PERIOD_MS = { minute: 60_000, day: 86_400_000 } as const;
type Period = keyof typeof PERIOD_MS;
const DEFAULT_REDIS_TIMEOUT_MS = 2000;

interface WindowCount {
  used: number;
  limit: number;
  /** What is left before 429: never below 0 (with sync_rate -1 Kong counts refused requests too, so `used` may pass the limit). */
  remaining: number;
  resetsAt: string;
}

export type CurrentWindows =
  | { readable: true; policy: 'redis'; minute: WindowCount | null; day: WindowCount | null }
  | { readable: false; policy: string | null; reason: string };

interface RedisSettings {
  host?: string | null;
  port?: number | null;
  username?: string | null;
  password?: string | null;
  database?: number | null;
  timeout?: number | null;
  ssl?: boolean | null;
  ssl_verify?: boolean | null;
  server_name?: string | null;
}

/** A plugin's scope as the Admin API answers it (`null` where it is not scoped). */
export interface PluginScope {
  route?: { id?: string } | null;
  service?: { id?: string } | null;
}

interface RateLimitingConfig {
  minute?: number | null;
  day?: number | null;
  limit_by?: string;
  policy?: string;
  redis?: RedisSettings | null;
}

/** The start of the period `time` falls in, in ms, as kong/tools/timestamp.lua's get_timestamps (UTC). */
const periodStart = (period: Period, time: Date) => Math.floor(time.getTime() / PERIOD_MS[period]) * PERIOD_MS[period];

/**
 * The Redis key of a consumer's counter, as Kong's rate-limiting writes it
 * (kong/plugins/rate-limiting/policies/init.lua, get_local_key): route and service ids of the
 * plugin's scope (the empty UUID for a consumer-scoped plugin), the identifier (the consumer id
 * for limit_by consumer), the period's start in ms and the period's name.
 */
export function counterKey(plugin: PluginScope, identifier: string, period: Period, time: Date): string {
  const id = (scope: { id?: string } | null | undefined) => scope?.id ?? EMPTY_UUID;
  return `ratelimit:${id(plugin.route)}:${id(plugin.service)}:${identifier}:${periodStart(period, time)}:${period}`;
}

async function readCounters(redis: RedisSettings, keys: string[], env: NodeJS.ProcessEnv): Promise<Array<string | null>> {
  // Where this machine reaches that Redis may differ from where Kong does (a tunnel, compose's network).
  const host = env.RATE_LIMIT_REDIS_HOST || redis.host;
  const port = env.RATE_LIMIT_REDIS_PORT ? Number(env.RATE_LIMIT_REDIS_PORT) : (redis.port ?? 6379);
  if (!host) throw new Error('the plugin names no Redis host (config.redis.host)');
  if (redis.password?.startsWith('{vault://')) throw new Error("the Redis password is a vault reference, which only Kong resolves");
  const timeout = redis.timeout ?? DEFAULT_REDIS_TIMEOUT_MS;
  // imported when a Redis is read: ~0.2 CPU-s that every command of the CLI, the portal and its
  // tests would otherwise spend at start for the few that read one
  const { createClient } = await import('redis');
  const client = createClient({
    socket: {
      host,
      port,
      connectTimeout: timeout,
      reconnectStrategy: false,
      ...(redis.ssl ? { tls: true as const, servername: redis.server_name ?? host, rejectUnauthorized: redis.ssl_verify === true } : {}),
    },
    username: redis.username ?? undefined,
    password: redis.password ?? undefined,
    database: redis.database ?? 0,
  });
  // Failures surface through connect() and the command; the event would otherwise be unhandled.
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeout} ms`)), timeout);
    });
    return await Promise.race([client.connect().then(() => client.mGet(keys)), deadline]);
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new Error(`cannot read Redis at ${host}:${port}: ${code ?? (error as Error).message}`);
  } finally {
    clearTimeout(timer);
    // A client whose connection failed is closed already, and destroy() would throw.
    if (client.isOpen) client.destroy();
  }
}

function windowCount(value: string | null | undefined, limit: number | null | undefined, period: Period, now: Date): WindowCount | null {
  if (typeof limit !== 'number') return null;
  const used = Number(value ?? 0);
  const resetsAt = isoSeconds(new Date(periodStart(period, now) + PERIOD_MS[period]));
  return { used, limit, remaining: Math.max(0, limit - used), resetsAt };
}

/**
 * A consumer's current minute and day, as its plan plugin counts them: readable from Redis with
 * the redis policy; with local (or cluster) the counters are inside each Kong node (or Kong's
 * database), out of reach from here. Never throws for an unreachable Redis: says why instead.
 * `plugin` is the consumer's plan plugin (provisioning's `inspect` reads it with the summary).
 */
export async function currentWindows(
  plugin: Plugin | undefined,
  consumerId: string,
  env: NodeJS.ProcessEnv,
  now = new Date(),
): Promise<CurrentWindows> {
  if (!plugin) return { readable: false, policy: null, reason: 'it has no rate-limiting plugin of its own' };
  const config = plugin.config as RateLimitingConfig;
  const policy = config.policy ?? 'local';
  if (policy === 'local') {
    return { readable: false, policy, reason: "policy local: the counters live in each Kong node's memory and are not readable from outside" };
  }
  if (policy !== 'redis') {
    return { readable: false, policy, reason: `policy ${policy}: the counters live in Kong's database, which the Admin API does not expose` };
  }
  if (config.limit_by !== 'consumer') {
    return { readable: false, policy, reason: `limit_by ${String(config.limit_by)}: the counters are not the consumer's` };
  }
  const keys = [counterKey(plugin, consumerId, 'minute', now), counterKey(plugin, consumerId, 'day', now)];
  try {
    const [minute, day] = await readCounters(config.redis ?? {}, keys, env);
    return { readable: true, policy, minute: windowCount(minute, config.minute, 'minute', now), day: windowCount(day, config.day, 'day', now) };
  } catch (error) {
    return { readable: false, policy, reason: (error as Error).message };
  }
}

/** The lines `show` prints for them. */
export function describeWindows(windows: CurrentWindows): string[] {
  if (!windows.readable) return [`  windows  not readable: ${windows.reason}`];
  const line = (label: string, count: WindowCount | null) =>
    count ? `  ${label.padEnd(8)} ${count.used} used, ${count.remaining} remaining of ${count.limit} (resets ${count.resetsAt})` : [];
  return [line('minute', windows.minute), line('today', windows.day)].flat();
}
