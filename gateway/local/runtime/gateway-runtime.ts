import type { LuaPluginHost } from '../lua/lua-plugin-host.ts';
import type { PluginEnvironment } from '../plugins/plugin.ts';
import { PluginSet } from '../plugins/plugin-set.ts';
import type { PluginRegistry } from '../plugins/registry.ts';
import { Router } from '../proxy/router.ts';
import type { Consumer, KeyAuthCredential } from '../control-plane/db/entities.ts';
import type { EntityStore, Snapshot } from '../control-plane/db/entity-store.ts';
import { ExpiringCounters } from './counters.ts';

export type Logger = (level: 'debug' | 'info' | 'warn' | 'err', message: string) => void;

/** What the proxy needs from one configuration, derived once per change of the store. */
interface Compiled {
  router: Router;
  plugins: PluginSet;
  consumersById: Map<string, Consumer>;
  consumersByUsername: Map<string, Consumer>;
  credentialsByKey: Map<string, KeyAuthCredential>;
}

export class GatewayRuntime {
  private compiled!: Compiled;
  /** What the store's pre-commit check built, installed once that snapshot is published. */
  private prepared?: { snapshot: Snapshot; compiled: Compiled };
  readonly env: PluginEnvironment;

  constructor(
    private readonly store: EntityStore,
    readonly registry: PluginRegistry,
    readonly lua: LuaPluginHost,
    readonly now: () => number,
    readonly log: Logger,
  ) {
    this.install(store.snapshot);
    // A write the runtime cannot compile (router, plugin set) is refused before it is stored.
    store.beforeCommit((snapshot) => {
      this.prepared = { snapshot, compiled: this.build(snapshot) };
    });
    store.onChange((snapshot) => this.install(snapshot));
    this.env = {
      now,
      counters: new ExpiringCounters(now),
      log,
      findConsumer: (idOrUsername) => this.compiled.consumersById.get(idOrUsername) ?? this.compiled.consumersByUsername.get(idOrUsername),
      findCredential: (key) => {
        const credential = this.compiled.credentialsByKey.get(key);
        if (!credential) return undefined;
        // A ttl'd credential stops authenticating when it expires (Kong filters expired rows).
        if (credential.expires_at !== null && credential.expires_at <= now()) return undefined;
        return credential;
      },
    };
  }

  get router(): Router {
    return this.compiled.router;
  }

  get plugins(): PluginSet {
    return this.compiled.plugins;
  }

  get snapshot(): Snapshot {
    return this.store.snapshot;
  }

  /** Makes `snapshot` the configuration the proxy runs: its compiled form, and the Lua plugins' configs. */
  private install(snapshot: Snapshot): void {
    const compiled = this.prepared?.snapshot === snapshot ? this.prepared.compiled : this.build(snapshot);
    this.prepared = undefined;
    const ids = new Set<string>();
    for (const [definition, config] of compiled.plugins.configs()) {
      if (this.registry.custom.includes(definition.name)) {
        this.lua.setConfig(definition.name, config);
        ids.add(config.__plugin_id);
      }
    }
    this.lua.retainConfigs(ids);
    this.compiled = compiled;
  }

  /** What the proxy needs from `snapshot`, without side effects. */
  private build(snapshot: Snapshot): Compiled {
    const services = snapshot.entities.services;
    const plugins = new PluginSet(snapshot.list('plugins'), this.registry);
    const consumersById = new Map<string, Consumer>();
    const consumersByUsername = new Map<string, Consumer>();
    for (const consumer of snapshot.list('consumers')) {
      consumersById.set(consumer.id, consumer);
      if (consumer.username) consumersByUsername.set(consumer.username, consumer);
    }
    return {
      router: new Router(
        snapshot.list('routes').sort((a, b) => a.created_at - b.created_at),
        new Map(services),
      ),
      plugins,
      consumersById,
      consumersByUsername,
      credentialsByKey: new Map(snapshot.list('keyauth_credentials').map((c) => [c.key, c])),
    };
  }
}
