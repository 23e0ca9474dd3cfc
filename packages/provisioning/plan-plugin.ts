import type { AdminApi } from './admin-api/admin-api.ts';
import type { EntityRef, Plugin } from './admin-api/entities.ts';
import type { Limits } from './plans.ts';
import { CONSUMER_TAG, KONG_YML_SELECT_TAG } from './tags.ts';

/**
 * A plan plugin: a rate-limiting plugin scoped to a consumer alone (no route, no service) and ours
 * as tags.ts's isOurs says: the library's (CONSUMER_TAG) or kong.yml's (its select tag: the
 * anonymous consumer's per-IP limits). Any other rate-limiting plugin on a consumer (another
 * team's, on a route of theirs) is not a plan, never read nor written as one.
 */
export const isPlanPlugin = (plugin: Plugin): plugin is Plugin & { consumer: EntityRef } =>
  plugin.name === 'rate-limiting' &&
  plugin.consumer !== null &&
  plugin.route === null &&
  plugin.service === null &&
  (plugin.tags.includes(CONSUMER_TAG) || plugin.tags.includes(KONG_YML_SELECT_TAG));

/** The consumer's plan plugin (isPlanPlugin), if it has one. */
export async function planPluginOf(admin: AdminApi, consumerId: string): Promise<Plugin | undefined> {
  return (await admin.consumerPlugins(consumerId)).find((plugin) => isPlanPlugin(plugin) && plugin.consumer.id === consumerId);
}

/** The limits a plan plugin enforces; null unless it has both. */
export function limitsOf(plugin: Plugin | undefined): Limits | null {
  const { minute, day } = plugin?.config ?? {};
  return typeof minute === 'number' && typeof day === 'number' ? { minute, day } : null;
}
