import type { AdminApi } from './admin-api/admin-api.ts';
import { planConfig, readCounterSettings, type CounterSettings } from './counter-settings.ts';
import type { Catalogue, Limits } from './plans.ts';

/** What the operations of consumers.ts, keys.ts and plan-assignment.ts work with. */
export interface ProvisioningContext {
  readonly admin: AdminApi;
  readonly catalogue: Catalogue;
  /** Unix ms: what a key's expiry instant and time left are reckoned from. */
  readonly now: () => number;
  /** A plan plugin's config for `limits`, counting where kong.yml's rate-limiting plugin counts. */
  planConfig(limits: Limits): Promise<Record<string, unknown>>;
}

/** kong.yml's counter settings are read once per context, on first use: make one per command or request. */
export function provisioningContext(admin: AdminApi, catalogue: Catalogue, now: () => number = Date.now): ProvisioningContext {
  let counters: Promise<CounterSettings> | undefined;
  return {
    admin,
    catalogue,
    now,
    planConfig: async (limits) => planConfig(limits, await (counters ??= readCounterSettings(admin))),
  };
}
