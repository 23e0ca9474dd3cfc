import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { validateRecord, type FieldErrors } from '../control-plane/schema/field-schema.ts';
import type { LuaPluginHost } from '../lua/lua-plugin-host.ts';
import { correlationId } from './correlation-id.ts';
import { keyAuth } from './key-auth.ts';
import type { PluginDefinition } from './plugin.ts';
import { rateLimiting } from './rate-limiting.ts';
import { requestSizeLimiting } from './request-size-limiting.ts';
import { requestTermination } from './request-termination.ts';
import { responseTransformer } from './response-transformer.ts';

/** Plugins bundled with Kong Gateway OSS 3.9 (kong/constants.lua BUNDLED_PLUGINS). */
export const KONG_BUNDLED_PLUGINS = new Set([
  'jwt', 'acl', 'correlation-id', 'cors', 'oauth2', 'tcp-log', 'udp-log', 'file-log', 'http-log',
  'key-auth', 'hmac-auth', 'basic-auth', 'ip-restriction', 'request-transformer', 'response-transformer',
  'request-size-limiting', 'rate-limiting', 'response-ratelimiting', 'syslog', 'loggly', 'datadog',
  'ldap-auth', 'statsd', 'bot-detection', 'aws-lambda', 'request-termination', 'prometheus',
  'proxy-cache', 'session', 'acme', 'grpc-gateway', 'grpc-web', 'pre-function', 'post-function',
  'azure-functions', 'zipkin', 'opentelemetry', 'ai-proxy', 'ai-prompt-decorator', 'ai-prompt-template',
  'ai-request-transformer', 'ai-response-transformer', 'ai-prompt-guard', 'standard-webhooks', 'redirect',
]);

const NATIVE: readonly PluginDefinition[] = [
  keyAuth, rateLimiting, requestTermination, responseTransformer, correlationId, requestSizeLimiting,
];

/**
 * The plugins this gateway can run: Kong's bundled ones it implements natively, plus the custom
 * Lua plugins found in gateway/plugins/ (KONG_PLUGINS=bundled,<name> in production).
 */
export class PluginRegistry {
  private constructor(readonly definitions: ReadonlyMap<string, PluginDefinition>, readonly custom: readonly string[]) {}

  static load(pluginsDir: string, lua: LuaPluginHost): PluginRegistry {
    const definitions = new Map(NATIVE.map((d) => [d.name, d]));
    const custom: string[] = [];
    if (existsSync(pluginsDir)) {
      for (const entry of readdirSync(pluginsDir, { withFileTypes: true })) {
        if (!entry.isDirectory() || !existsSync(join(pluginsDir, entry.name, 'handler.lua'))) continue;
        if (KONG_BUNDLED_PLUGINS.has(entry.name)) throw new Error(`custom plugin ${entry.name} has the name of a bundled Kong plugin`);
        definitions.set(entry.name, lua.loadPlugin(pluginsDir, entry.name));
        custom.push(entry.name);
      }
    }
    return new PluginRegistry(definitions, custom);
  }

  get(name: string): PluginDefinition | undefined {
    return this.definitions.get(name);
  }

  /**
   * Validates and defaults a plugin's config as Kong's schema does, then refuses what the local
   * gateway cannot run. Errors are keyed by field path under `prefix`.
   */
  validateConfig(
    name: string,
    config: unknown,
    scope: { consumer: boolean; route: boolean; service: boolean },
    errors: FieldErrors,
  ): Record<string, unknown> {
    const definition = this.definitions.get(name);
    if (!definition) {
      errors.name = KONG_BUNDLED_PLUGINS.has(name)
        ? `plugin '${name}' is bundled with Kong 3.9 but not implemented by the local gateway`
        : `plugin '${name}' not enabled; add it to the 'plugins' configuration property`;
      return {};
    }
    if (definition.noConsumer && scope.consumer) errors.consumer = 'value must be null';
    if (definition.noRoute && scope.route) errors.route = 'value must be null';
    if (definition.noService && scope.service) errors.service = 'value must be null';
    const local: FieldErrors = {};
    const validated = validateRecord(definition.configFields, config ?? {}, 'config', local);
    if (Object.keys(local).length === 0) {
      const problem = definition.check?.(validated);
      if (problem) local['@entity'] = problem;
      const unsupported = definition.unsupported?.(validated);
      if (unsupported) local['config'] = `not supported by the local gateway: ${unsupported}`;
    }
    Object.assign(errors, local);
    return validated;
  }
}
