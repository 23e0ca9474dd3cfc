import type { FieldSchema } from '../control-plane/schema/field-schema.ts';
import type { RequestContext } from '../proxy/request-context.ts';
import type { Consumer, KeyAuthCredential } from '../control-plane/db/entities.ts';

/** What a plugin may reach outside its request: the entity cache, the clock, node-local state. */
export interface PluginEnvironment {
  /** Milliseconds since the epoch; injectable so tests control time. */
  now(): number;
  findConsumer(idOrUsername: string): Consumer | undefined;
  /** A key-auth credential by key, unless expired. */
  findCredential(key: string): KeyAuthCredential | undefined;
  /** Node-local counters (the rate-limiting plugin's shared dict). */
  counters: CounterStore;
  log(level: 'debug' | 'info' | 'warn' | 'err', message: string): void;
}

export interface CounterStore {
  get(key: string): number;
  increment(key: string, by: number, ttlSeconds: number): number;
}

export type Phase = 'rewrite' | 'access' | 'header_filter' | 'body_filter' | 'log';
export const DOWNSTREAM_PHASES = ['header_filter', 'body_filter', 'log'] as const;

export type PhaseHandler = (ctx: RequestContext, config: PluginConfig, env: PluginEnvironment) => void | Promise<void>;

/** A plugin's config after validation, with Kong's scope fields (`route_id`, ...) added. */
export type PluginConfig = Record<string, unknown> & {
  __plugin_id: string;
  __route_id: string | null;
  __service_id: string | null;
  __consumer_id: string | null;
};

/** A loaded plugin: its handler's PRIORITY, phases, and the schema of its config. */
export interface PluginDefinition {
  name: string;
  priority: number;
  version: string;
  /** A custom plugin run by the Lua VM. */
  lua?: boolean;
  /** typedefs.no_consumer / no_route / no_service in the plugin schema. */
  noConsumer?: boolean;
  noRoute?: boolean;
  noService?: boolean;
  configFields: FieldSchema['fields'];
  /** The schema's custom_validator / entity checks: an error message, or undefined. */
  check?(config: Record<string, unknown>): string | undefined;
  /** What the local gateway cannot run faithfully: a message naming the field, or undefined. */
  unsupported?(config: Record<string, unknown>): string | undefined;
  rewrite?: PhaseHandler;
  access?: PhaseHandler;
  header_filter?: PhaseHandler;
  /** Receives the whole body at once (one chunk, eof). */
  body_filter?: (ctx: RequestContext, config: PluginConfig, env: PluginEnvironment, body: Buffer) => void | Promise<void>;
  log?: PhaseHandler;
}
