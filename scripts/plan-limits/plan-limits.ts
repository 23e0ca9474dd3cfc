import { CONSUMER_TAG, isPlanPlugin, planOf, type AdminApi, type Plugin } from '../../packages/provisioning/index.ts';

/** One consumer's plan as Kong enforces it: its rate-limiting plugin's limits. */
export interface ConsumerPlanLimits {
  /** The username: what Kong's prometheus plugin puts in the `consumer` label. */
  consumer: string;
  plan: string;
  minute: number | null;
  day: number | null;
  /**
   * Whether its rate-limiting counts the requests it refuses (429s) against its periods: policy
   * redis with sync_rate -1 checks by an INCR of each period (Kong 3.9.3
   * kong/plugins/rate-limiting/policies/init.lua:406-415); the other policies count only what they let
   * through (handler.lua:194-216).
   */
  refusedCounted: boolean;
}

const PAGE_SIZE = 1000;

const limit = (value: unknown) => (typeof value === 'number' ? value : null);

/** sync_rate's default is -1 (Kong 3.9.3 kong/plugins/rate-limiting/schema.lua:98). */
const countsRefused = (config: Plugin['config']) => config.policy === 'redis' && (config.sync_rate ?? -1) === -1;

/**
 * The plans of the consumers the provisioning library manages, in two listings whatever their
 * number: their plan plugins (tagged like the consumers), then the consumers. Credentials are
 * never read. A consumer without a plan plugin is left out: the CLI always makes one.
 */
export async function readPlanLimits(admin: AdminApi): Promise<ConsumerPlanLimits[]> {
  const plugins = new Map<string, Plugin>();
  for await (const plugin of admin.listPlugins({ tags: CONSUMER_TAG, size: PAGE_SIZE }, 'listing the plan plugins')) {
    if (isPlanPlugin(plugin)) plugins.set(plugin.consumer.id, plugin);
  }
  const limits: ConsumerPlanLimits[] = [];
  for await (const consumer of admin.listConsumers({ tags: CONSUMER_TAG, size: PAGE_SIZE })) {
    const plugin = plugins.get(consumer.id);
    if (!consumer.username || !plugin) continue;
    const plan = planOf(consumer) ?? plugin.tags.find((tag) => tag.startsWith('plan:'))?.slice(5) ?? '';
    limits.push({
      consumer: consumer.username,
      plan,
      minute: limit(plugin.config.minute),
      day: limit(plugin.config.day),
      refusedCounted: countsRefused(plugin.config),
    });
  }
  return limits.sort((a, b) => (a.consumer < b.consumer ? -1 : a.consumer > b.consumer ? 1 : 0));
}

const PLAN_LIMIT_METRIC = 'animal_store_consumer_plan_limit';
const REFUSED_COUNTED_METRIC = 'animal_store_consumer_refused_counted';

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Prometheus's text format: one gauge per consumer and period its plan limits, and one per
 * consumer saying whether its 429s count against those limits (1) or not (0).
 */
export function planLimitsExposition(limits: ConsumerPlanLimits[]): string {
  const lines = [
    `# HELP ${PLAN_LIMIT_METRIC} Requests the consumer's plan allows per period (its rate-limiting plugin).`,
    `# TYPE ${PLAN_LIMIT_METRIC} gauge`,
  ];
  for (const { consumer, plan, ...periods } of limits) {
    for (const period of ['day', 'minute'] as const) {
      const value = periods[period];
      if (value === null) continue;
      lines.push(`${PLAN_LIMIT_METRIC}{consumer="${escapeLabel(consumer)}",plan="${escapeLabel(plan)}",period="${period}"} ${value}`);
    }
  }
  lines.push(
    `# HELP ${REFUSED_COUNTED_METRIC} 1 when the consumer's rate-limiting counts the requests it refuses against its limits (policy redis, sync_rate -1).`,
    `# TYPE ${REFUSED_COUNTED_METRIC} gauge`,
  );
  for (const { consumer, plan, refusedCounted } of limits) {
    lines.push(`${REFUSED_COUNTED_METRIC}{consumer="${escapeLabel(consumer)}",plan="${escapeLabel(plan)}"} ${refusedCounted ? 1 : 0}`);
  }
  return `${lines.join('\n')}\n`;
}
