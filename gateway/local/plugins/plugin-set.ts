import type { Plugin } from '../store/entities.ts';
import type { PluginConfig, PluginDefinition } from './plugin.ts';
import type { PluginRegistry } from './registry.ts';

/** One plugin (by name) and its configured instances, keyed as Kong's plugins iterator keys them. */
export interface PluginEntry {
  definition: PluginDefinition;
  /** build_compound_key(route_id, service_id, consumer_id) → config */
  combos: Map<string, PluginConfig>;
  global?: PluginConfig;
}

const key = (route: string | null | undefined, service: string | null | undefined, consumer: string | null | undefined) =>
  `${route ?? ''}:${service ?? ''}:${consumer ?? ''}`;

/**
 * The enabled plugins of a configuration, ordered as Kong runs them (PRIORITY, highest first),
 * with Kong 3.9's precedence between scopes (kong/runloop/plugins_iterator.lua lookup_cfg):
 * route+service+consumer, route+consumer, service+consumer, route+service, consumer, route,
 * service, global.
 */
export class PluginSet {
  readonly entries: PluginEntry[];

  constructor(plugins: readonly Plugin[], registry: PluginRegistry) {
    const byName = new Map<string, PluginEntry>();
    for (const plugin of plugins) {
      if (!plugin.enabled) continue;
      const definition = registry.get(plugin.name);
      if (!definition) continue; // refused when the plugin was created
      let entry = byName.get(plugin.name);
      if (!entry) {
        entry = { definition, combos: new Map() };
        byName.set(plugin.name, entry);
      }
      const config: PluginConfig = {
        ...plugin.config,
        __plugin_id: plugin.id,
        __route_id: plugin.route?.id ?? null,
        __service_id: plugin.service?.id ?? null,
        __consumer_id: plugin.consumer?.id ?? null,
      };
      if (!plugin.route && !plugin.service && !plugin.consumer) entry.global = config;
      entry.combos.set(key(plugin.route?.id, plugin.service?.id, plugin.consumer?.id), config);
    }
    // Kong sorts by PRIORITY; equal priorities by name keeps runs deterministic.
    this.entries = [...byName.values()].sort((a, b) => b.definition.priority - a.definition.priority || a.definition.name.localeCompare(b.definition.name));
  }

  lookup(entry: PluginEntry, routeId: string | undefined, serviceId: string | undefined, consumerId: string | undefined): PluginConfig | undefined {
    const { definition, combos } = entry;
    const r = definition.noRoute ? undefined : routeId;
    const s = definition.noService ? undefined : serviceId;
    const c = definition.noConsumer ? undefined : consumerId;
    if (r && s && c) {
      const hit = combos.get(key(r, s, c));
      if (hit) return hit;
    }
    if (r && c) {
      const hit = combos.get(key(r, null, c));
      if (hit) return hit;
    }
    if (s && c) {
      const hit = combos.get(key(null, s, c));
      if (hit) return hit;
    }
    if (r && s) {
      const hit = combos.get(key(r, s, null));
      if (hit) return hit;
    }
    if (c) {
      const hit = combos.get(key(null, null, c));
      if (hit) return hit;
    }
    if (r) {
      const hit = combos.get(key(r, null, null));
      if (hit) return hit;
    }
    if (s) {
      const hit = combos.get(key(null, s, null));
      if (hit) return hit;
    }
    return entry.global;
  }

  /** Every config, for handing Lua plugin configs to the VM. */
  *configs(): Generator<[PluginDefinition, PluginConfig]> {
    for (const entry of this.entries) for (const config of entry.combos.values()) yield [entry.definition, config];
  }
}
