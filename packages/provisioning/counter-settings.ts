import type { AdminApi } from './admin-api/admin-api.ts';
import type { Limits } from './plans.ts';
import { KONG_YML_SELECT_TAG } from './tags.ts';

/**
 * Where a plan plugin counts: rate-limiting's `policy`, `fault_tolerant`, and with policy redis
 * its `redis` record and `sync_rate`, as kong.yml's fallback rate-limiting plugin has them.
 */
export type CounterSettings = { policy: string; fault_tolerant?: boolean; redis?: unknown; sync_rate?: unknown };

/**
 * The counter settings of kong.yml's fallback rate-limiting plugin (on our services, no consumer,
 * tagged with kong.yml's select tag): plan plugins count where it counts, so a consumer's plan
 * and the fallback never disagree. kong.yml takes them from DECK_RATE_LIMIT_POLICY and
 * DECK_RATE_LIMIT_REDIS_*; a gateway without that plugin counts locally.
 */
export async function readCounterSettings(admin: AdminApi): Promise<CounterSettings> {
  for await (const plugin of admin.listPlugins({ tags: KONG_YML_SELECT_TAG }, "reading kong.yml's rate-limiting plugin")) {
    if (plugin.name !== 'rate-limiting' || plugin.consumer || plugin.route) continue;
    const { config } = plugin;
    const policy = String(config.policy ?? 'local');
    return {
      policy,
      ...(typeof config.fault_tolerant === 'boolean' ? { fault_tolerant: config.fault_tolerant } : {}),
      ...(policy === 'redis' ? { redis: config.redis, sync_rate: config.sync_rate } : {}),
    };
  }
  return { policy: 'local' };
}

/** A plan plugin's config: the plan's limits per consumer, counted where `counters` say. */
export const planConfig = (limits: Limits, counters: CounterSettings): Record<string, unknown> => ({
  minute: limits.minute,
  day: limits.day,
  limit_by: 'consumer',
  ...counters,
});
