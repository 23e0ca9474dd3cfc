import type { AdminApi } from './admin-api/admin-api.ts';
import type { Plugin } from './admin-api/entities.ts';
import type { Limits } from './plans.ts';

/** The consumer's rate-limiting plugin (its plan), if it has one. */
export async function planPluginOf(admin: AdminApi, consumerId: string): Promise<Plugin | undefined> {
  return (await admin.consumerPlugins(consumerId)).find((plugin) => plugin.name === 'rate-limiting');
}

/** The limits a plan plugin enforces; null unless it has both. */
export function limitsOf(plugin: Plugin | undefined): Limits | null {
  const { minute, day } = plugin?.config ?? {};
  return typeof minute === 'number' && typeof day === 'number' ? { minute, day } : null;
}
