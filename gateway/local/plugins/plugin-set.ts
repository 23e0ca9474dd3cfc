import type { Plugin } from '../control-plane/db/entities.ts';
import type { PluginConfig, PluginDefinition } from './plugin.ts';
import type { PluginRegistry } from './registry.ts';

/** One plugin (by name) and its configured instances, keyed as Kong's plugins iterator keys them. */
export interface PluginEntry {
  definition: PluginDefinition;
  /** build_compound_key(route_id, service_id, consumer_id) → config */
  combos: Map<string, PluginConfig>;
  global?: PluginConfig;
  /** The consumer ids some instance of this plugin is scoped to. */
  consumerIds: Set<string>;
}

/**
 * What lookup answers for one plugin on one route and service: `base` for any consumer without
 * an instance of its own (or none), `byConsumer` for the others. Precomputed per route so that a
 * request pays one Map lookup per plugin instead of up to seven compound keys.
 */
export interface PlannedPlugin {
  entry: PluginEntry;
  base: PluginConfig | undefined;
  byConsumer: Map<string, PluginConfig> | undefined;
}

/**
 * kong/db/dao/plugins.lua (3.9.3) sort_by_handler_priority: PRIORITY descending; equal non-zero
 * priorities by name descending. (Kong leaves two plugins of priority 0 unordered; here they
 * follow the same rule.)
 */
export function runOrder(a: Pick<PluginDefinition, 'name' | 'priority'>, b: Pick<PluginDefinition, 'name' | 'priority'>): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.name > b.name ? -1 : a.name < b.name ? 1 : 0;
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
  private readonly plans = new Map<string, PlannedPlugin[]>();

  constructor(plugins: readonly Plugin[], registry: PluginRegistry) {
    const byName = new Map<string, PluginEntry>();
    for (const plugin of plugins) {
      if (!plugin.enabled) continue;
      const definition = registry.get(plugin.name);
      if (!definition) continue; // refused when the plugin was created
      let entry = byName.get(plugin.name);
      if (!entry) {
        entry = { definition, combos: new Map(), consumerIds: new Set() };
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
      if (plugin.consumer) entry.consumerIds.add(plugin.consumer.id);
    }
    this.entries = [...byName.values()].sort((a, b) => runOrder(a.definition, b.definition));
  }

  /** The plugins of a route and service, in run order; `configFor` resolves one for a consumer. */
  planFor(routeId: string, serviceId: string | undefined): PlannedPlugin[] {
    const planKey = `${routeId}:${serviceId ?? ''}`;
    let plan = this.plans.get(planKey);
    if (!plan) {
      plan = this.entries.map((entry) => {
        let byConsumer: Map<string, PluginConfig> | undefined;
        for (const consumerId of entry.consumerIds) {
          const config = this.lookup(entry, routeId, serviceId, consumerId);
          if (config) (byConsumer ??= new Map()).set(consumerId, config);
        }
        return { entry, base: this.lookup(entry, routeId, serviceId, undefined), byConsumer };
      });
      this.plans.set(planKey, plan);
    }
    return plan;
  }

  lookup(
    entry: PluginEntry,
    routeId: string | undefined,
    serviceId: string | undefined,
    consumerId: string | undefined,
  ): PluginConfig | undefined {
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

  static configFor(planned: PlannedPlugin, consumerId: string | undefined): PluginConfig | undefined {
    return (consumerId !== undefined && planned.byConsumer?.get(consumerId)) || planned.base;
  }

  /** Every config, for handing Lua plugin configs to the VM. */
  *configs(): Generator<[PluginDefinition, PluginConfig]> {
    for (const entry of this.entries) for (const config of entry.combos.values()) yield [entry.definition, config];
  }
}
