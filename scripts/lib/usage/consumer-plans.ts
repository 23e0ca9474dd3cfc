import { expectOk, pages, type Consumer, type KongAdminClient, type Plugin } from '../../kong-admin/client.ts';
import { CONSUMER_TAG } from '../provisioning.ts';

/** What usage prints beside a consumer's counts. */
export interface PlanInfo {
  /** From the consumer's `plan:<name>` tag; null without one (kong.yml's consumers, another team's). */
  plan: string | null;
  /** From its rate-limiting plugin; null without one. */
  limitMinute: number | null;
  limitDay: number | null;
  /** False when the Admin API does not know the username (any more): usage is then all there is. */
  exists: boolean;
}

const PAGE_SIZE = 1000;
type PluginPage = { data?: Plugin[]; offset?: string; next?: string | null };
/** Up to this many usernames are looked up one by one (two calls each); more, by listing. */
const ONE_BY_ONE = 20;

const planOf = (consumer: Consumer) => (consumer.tags ?? []).find((tag) => tag.startsWith('plan:'))?.slice(5) ?? null;

function limitsOf(plugin: Plugin | undefined): Pick<PlanInfo, 'limitMinute' | 'limitDay'> {
  const config = (plugin?.config ?? {}) as { minute?: unknown; day?: unknown };
  const limit = (value: unknown) => (typeof value === 'number' ? value : null);
  return { limitMinute: limit(config.minute), limitDay: limit(config.day) };
}

/** The consumer's rate-limiting plugin (its plan), if it has one. */
export async function planPluginOf(kong: KongAdminClient, consumerId: string): Promise<Plugin | undefined> {
  const result = await kong.GET('/consumers/{consumer_username_or_id}/plugins', { params: { path: { consumer_username_or_id: consumerId } } });
  const page = expectOk(result, 'reading the consumer plugins') as { data?: Plugin[] };
  return page.data?.find((plugin) => plugin.name === 'rate-limiting');
}

async function oneConsumer(kong: KongAdminClient, username: string): Promise<PlanInfo> {
  const result = await kong.GET('/consumers/{consumer_username_or_id}', { params: { path: { consumer_username_or_id: username } } });
  if (result.response.status === 404) return { plan: null, limitMinute: null, limitDay: null, exists: false };
  const consumer = expectOk(result, `reading consumer ${username}`);
  return { plan: planOf(consumer), ...limitsOf(await planPluginOf(kong, consumer.id!)), exists: true };
}

/**
 * Plan and limits of each username. A few are looked up one by one; for more, the CLI's
 * consumers (tag petstore-consumer) and their plan plugins come in two listings whatever their
 * number, and only the other usernames (kong.yml's anonymous consumer…) one by one.
 */
export async function plansOf(kong: KongAdminClient, usernames: string[]): Promise<Map<string, PlanInfo>> {
  const plans = new Map<string, PlanInfo>();
  if (usernames.length > ONE_BY_ONE) {
    const pluginsByConsumer = new Map<string, Plugin>();
    for await (const plugin of pages((offset) =>
      kong
        .GET('/plugins', { params: { query: { tags: CONSUMER_TAG, size: PAGE_SIZE, offset } } })
        // Kong's OpenAPI documents one plugin where /plugins answers a page of them.
        .then((r) => expectOk(r, 'listing the plan plugins') as unknown as PluginPage),
    )) {
      const consumerId = (plugin.consumer as { id?: string } | null | undefined)?.id;
      if (plugin.name === 'rate-limiting' && consumerId) pluginsByConsumer.set(consumerId, plugin);
    }
    for await (const consumer of pages((offset) =>
      kong.GET('/consumers', { params: { query: { tags: CONSUMER_TAG, size: PAGE_SIZE, offset } } }).then((r) => expectOk(r, 'listing consumers')),
    )) {
      if (!consumer.username) continue;
      plans.set(consumer.username, { plan: planOf(consumer), ...limitsOf(pluginsByConsumer.get(consumer.id!)), exists: true });
    }
  }
  for (const username of usernames) if (!plans.has(username)) plans.set(username, await oneConsumer(kong, username));
  return plans;
}
