import type { Static, TObject, TProperties, TSchema } from '@sinclair/typebox';
import { headerNameError } from './typedef-checks.ts';
import * as T from '../typedefs.ts';

/**
 * A plugin's configuration schema on the control plane: Kong's schema.lua `config` record, its
 * scope restrictions and the checks Kong runs as entity_checks or a custom_validator. Bundled
 * plugins write theirs in TypeScript (kong/plugins/<name>/schema.lua), typed from the schema;
 * custom plugins' schema.lua files are read by the data plane's Lua and converted (lua-schema.ts).
 */
export interface PluginSchema<C extends TSchema = TObject> {
  name: string;
  /** typedefs.no_consumer / no_route / no_service */
  noConsumer?: boolean;
  noRoute?: boolean;
  noService?: boolean;
  /**
   * The schema's `protocols` field (typedefs.protocols_http, typedefs.protocols): it replaces the
   * plugins entity's (kong/db/schema/init.lua:1120-1131 resolve_field). Absent: the entity's.
   */
  protocols?: TSchema;
  /** The `config` record. */
  config: C;
  /**
   * The config record's custom_validator, run once its fields are valid: its message is the
   * config field's error (`fields.config`, kong/db/schema/init.lua:1011-1021), not the entity's.
   */
  customValidator?(config: Static<C>): string | undefined;
  /** The schema's entity checks: an error message, each failing check's in order when several, or undefined. */
  check?(config: Static<C>): string | readonly string[] | undefined;
  /** The schema's `conditional` entity checks whose then_match is `required = true`, after `check`'s. */
  conditionals?: readonly RequiredWhen[];
  /** What the data plane cannot run faithfully: a message naming the field, or undefined. */
  unsupported?(config: Static<C>): string | undefined;
  /** The config record's deprecated shorthand_fields, each replaced by a field deeper in config. */
  shorthands?: readonly DeprecatedShorthand[];
}

/**
 * A shorthand_fields entry with `deprecation.replaced_with` (kong/db/schema/init.lua
 * process_auto_fields): its value is validated against `field` and moved to `replacedWith`, where
 * a value already set takes precedence and a different one is an error.
 */
export interface DeprecatedShorthand {
  name: string;
  field: TSchema;
  replacedWith: readonly string[];
  message: string;
  removalInVersion: string;
}

/**
 * `{ conditional = { if_field = …, if_match = { eq = … }, then_field = …, then_match = { required = true } } }`,
 * paths in the plugin entity (`config.redis.host`).
 */
export interface RequiredWhen {
  ifField: string;
  eq: string;
  thenField: string;
}

/** A bundled plugin's schema; its config type is `PluginConfig<typeof schema>`. */
export function definePlugin<P extends TProperties>(schema: PluginSchema<TObject<P>>): PluginSchema<TObject<P>> {
  return schema;
}

export type PluginConfig<S> = S extends PluginSchema<infer C> ? Static<C> : never;

/** A plugin's config record: required, as Kong makes records in entities (make_records_required). */
export const configRecord = <P extends TProperties>(fields: P) => T.record(fields, { required: true });

/** A field of Kong's header_name typedef, refused with Kong's message. */
export const headerName = () => T.string({ custom: headerNameError });

/** What the data plane's Lua reports for each plugin it loads (describe mode: plugins.json). */
export interface PluginDescription {
  name: string;
  priority?: number;
  version?: string;
  /** The handler's phases: init_worker, configure, rewrite, access, header_filter, body_filter, log… */
  phases?: string[];
  /** schema.lua as data (custom plugins); typedefs with a Lua validator carry `typedef: "<name>"`. */
  schema?: Record<string, unknown>;
  /** Why the plugin cannot be described (not installed, bad PRIORITY/VERSION, a function in its schema). */
  error?: string;
}

/** A plugin the gateway can run: its schema and what its handler declares. */
export interface PluginDefinition extends PluginSchema {
  priority: number;
  version: string;
  custom: boolean;
}
