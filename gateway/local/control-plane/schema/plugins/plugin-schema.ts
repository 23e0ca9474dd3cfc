import type { FieldSchema } from '../field-schema.ts';

/**
 * A plugin's configuration schema on the control plane: Kong's schema.lua `config` record in the
 * gateway's schema DSL, its scope restrictions and the checks Kong runs as entity_checks or a
 * custom_validator. Bundled plugins write theirs in TypeScript (kong/plugins/<name>/schema.lua);
 * custom plugins' schema.lua files are read by the data plane's Lua and converted (lua-schema.ts).
 */
export interface PluginSchema {
  name: string;
  /** typedefs.no_consumer / no_route / no_service */
  noConsumer?: boolean;
  noRoute?: boolean;
  noService?: boolean;
  configFields: FieldSchema['fields'];
  /** The schema's entity checks: an error message, or undefined. */
  check?(config: Record<string, unknown>): string | undefined;
  /** What the data plane cannot run faithfully: a message naming the field, or undefined. */
  unsupported?(config: Record<string, unknown>): string | undefined;
}

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
