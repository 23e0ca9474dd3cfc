import { CONSUMER_TAG, isOurs, isPlanPlugin, planOf, planPluginOf, type AdminApi, type Plugin } from '../provisioning/index.ts';

/** What usage prints beside a consumer's counts. */
export interface PlanInfo {
  /** From the consumer's `plan:<name>` tag; null without one (kong.yml's consumers, another team's). */
  plan: string | null;
  /** From its rate-limiting plugin; null without one. */
  limitMinute: number | null;
  limitDay: number | null;
  /** False when the Admin API does not know the username (any more): usage is then all there is. */
  exists: boolean;
  /**
   * The CLI's or kong.yml's (provisioning's isOurs); false for another team's, whose plan is not
   * read. A username the Admin API does not know is nobody's: false too.
   */
  ours: boolean;
}

const PAGE_SIZE = 1000;
/** Up to this many usernames are looked up one by one (two calls each); more, by listing. */
const ONE_BY_ONE = 20;

function limitsOf(plugin: Plugin | undefined): Pick<PlanInfo, 'limitMinute' | 'limitDay'> {
  const limit = (value: unknown) => (typeof value === 'number' ? value : null);
  return { limitMinute: limit(plugin?.config.minute), limitDay: limit(plugin?.config.day) };
}

async function oneConsumer(admin: AdminApi, username: string): Promise<PlanInfo> {
  const consumer = await admin.findConsumer(username);
  if (!consumer) return { plan: null, limitMinute: null, limitDay: null, exists: false, ours: false };
  if (!isOurs(consumer)) return { plan: null, limitMinute: null, limitDay: null, exists: true, ours: false };
  return { plan: planOf(consumer), ...limitsOf(await planPluginOf(admin, consumer.id)), exists: true, ours: true };
}

/**
 * Plan and limits of each username, and whether it is ours. A few are looked up one by one; for
 * more, the CLI's consumers (tag petstore-consumer) and their plan plugins come in two listings
 * whatever their number, and only the other usernames (kong.yml's anonymous consumer, another
 * team's…) one by one.
 */
export async function plansOf(admin: AdminApi, usernames: string[]): Promise<Map<string, PlanInfo>> {
  const plans = new Map<string, PlanInfo>();
  if (usernames.length > ONE_BY_ONE) {
    const pluginsByConsumer = new Map<string, Plugin>();
    for await (const plugin of admin.listPlugins({ tags: CONSUMER_TAG, size: PAGE_SIZE }, 'listing the plan plugins')) {
      if (isPlanPlugin(plugin)) pluginsByConsumer.set(plugin.consumer.id, plugin);
    }
    for await (const consumer of admin.listConsumers({ tags: CONSUMER_TAG, size: PAGE_SIZE })) {
      if (!consumer.username) continue;
      plans.set(consumer.username, { plan: planOf(consumer), ...limitsOf(pluginsByConsumer.get(consumer.id)), exists: true, ours: true });
    }
  }
  for (const username of usernames) if (!plans.has(username)) plans.set(username, await oneConsumer(admin, username));
  return plans;
}
