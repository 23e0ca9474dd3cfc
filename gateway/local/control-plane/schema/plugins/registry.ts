import type { TProperties, TSchema } from '@sinclair/typebox';
import { isPlainObject, setEntityErrors, validateField, type FieldErrors } from '../validate.ts';
import { acl } from './acl.ts';
import { correlationId } from './correlation-id.ts';
import { keyAuth } from './key-auth.ts';
import { fieldsFromLuaSchema } from './lua-schema.ts';
import type { PluginDefinition, PluginDescription, PluginSchema, RequiredWhen } from './plugin-schema.ts';
import { prometheus } from './prometheus.ts';
import { rateLimiting } from './rate-limiting.ts';
import { requestSizeLimiting } from './request-size-limiting.ts';
import { requestTermination } from './request-termination.ts';
import { responseTransformer } from './response-transformer.ts';
import { expandShorthands, withShorthands } from './shorthands.ts';

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

/** The bundled plugins the data plane implements, with their schemas (the data plane trusts them). */
export const BUNDLED_SCHEMAS = [
  keyAuth, rateLimiting, requestTermination, responseTransformer, correlationId, requestSizeLimiting, prometheus, acl,
] as const;

export class PluginDescriptionError extends Error {}

/**
 * The plugins the gateway can run: what the data plane loaded (its PRIORITY, VERSION, and for
 * custom plugins their schema.lua), with the control plane's schemas for the bundled ones.
 */
export class PluginRegistry {
  private constructor(readonly definitions: ReadonlyMap<string, PluginDefinition>) {}

  /** From the data plane's description of its plugins (cmd/describe-plugins.ts). */
  static fromDescriptions(descriptions: readonly PluginDescription[]): PluginRegistry {
    const bundled = new Map(BUNDLED_SCHEMAS.map((schema) => [schema.name, schema]));
    const definitions = new Map<string, PluginDefinition>();
    for (const description of descriptions) {
      const { name, priority, version, error } = description;
      if (error !== undefined || priority === undefined || version === undefined) {
        throw new PluginDescriptionError(`plugin ${name}: ${error ?? 'its handler declares no PRIORITY or VERSION'}`);
      }
      const schema = bundled.get(name);
      if (schema) {
        definitions.set(name, { ...(schema as PluginSchema), priority, version, custom: false });
      } else if (KONG_BUNDLED_PLUGINS.has(name)) {
        throw new PluginDescriptionError(`plugin ${name} is bundled with Kong but the control plane has no schema for it`);
      } else {
        // Kong refuses to load a plugin without one (kong/db/dao/plugins.lua load_plugin_schemas).
        if (!description.schema) throw new PluginDescriptionError(`plugin ${name}: no configuration schema found (schema.lua)`);
        const converted = fieldsFromLuaSchema(name, description.schema.fields);
        definitions.set(name, {
          name,
          priority,
          version,
          custom: true,
          config: converted.config,
          ...(converted.protocols ? { protocols: converted.protocols } : {}),
          noConsumer: converted.noConsumer,
          noRoute: converted.noRoute,
          noService: converted.noService,
        });
      }
    }
    return new PluginRegistry(definitions);
  }

  get custom(): string[] {
    return [...this.definitions.values()].filter((d) => d.custom).map((d) => d.name);
  }

  get(name: string): PluginDefinition | undefined {
    return this.definitions.get(name);
  }

  configSchema(name: string): TSchema | undefined {
    return this.definitions.get(name)?.config;
  }

  /** The plugins entity's fields a plugin's schema declares anew (`protocols`), replacing the entity's. */
  fields(name: string): TProperties | undefined {
    const protocols = this.definitions.get(name)?.protocols;
    return protocols ? { protocols } : undefined;
  }

  expandShorthands(name: string, config: unknown, errors: FieldErrors): unknown {
    return expandShorthands(this.definitions.get(name)?.shorthands ?? [], config, errors);
  }

  presentConfig(name: string, config: Record<string, unknown>): Record<string, unknown> {
    return withShorthands(this.definitions.get(name)?.shorthands ?? [], config);
  }

  /**
   * Validates and defaults a plugin's config as Kong's schema does, then refuses what the data
   * plane cannot run. Errors are keyed by field path.
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
    const expanded = this.expandShorthands(name, config ?? {}, local);
    const validated = validateField(definition.config, expanded, 'config', local) as Record<string, unknown>;
    const fieldsValid = Object.keys(local).length === 0;
    const invalid = fieldsValid ? definition.customValidator?.(validated) : undefined;
    if (invalid !== undefined) local['config'] = invalid;
    const messages = fieldsValid ? [definition.check?.(validated) ?? []].flat() : [];
    for (const conditional of definition.conditionals ?? []) {
      const message = requiredWhen(conditional, validated, local);
      if (message !== undefined) messages.push(message);
    }
    setEntityErrors(local, messages);
    if (Object.keys(local).length === 0) {
      const unsupported = definition.unsupported?.(validated);
      if (unsupported) local['config'] = `not supported by the local gateway: ${unsupported}`;
    }
    Object.assign(errors, local);
    return validated;
  }
}

function valueAt(config: unknown, path: readonly string[]): unknown {
  let value = config;
  for (const key of path) value = isPlainObject(value) ? value[key] : undefined;
  return value;
}

/**
 * Kong's `conditional` entity check with then_match `required` (kong/db/schema/init.lua:725-765,
 * 3.9.3): when the if_field matches, a then_field missing is its error `required field missing`;
 * one given but invalid keeps its own error. Either way the entity's error names the if_field.
 * It runs whatever errors the fields have (run_with_invalid_fields); under a config the custom
 * validator refused, the then_field's error is left out (Kong fails there: errors.config is a string).
 */
function requiredWhen({ ifField, eq, thenField }: RequiredWhen, config: Record<string, unknown>, errors: FieldErrors): string | undefined {
  const [ifPath, thenPath] = [ifField, thenField].map((field) => field.split('.').slice(1));
  if (!isPlainObject(config) || valueAt(config, ifPath!) !== eq) return undefined;
  const value = valueAt(config, thenPath!);
  if (value === undefined || value === null) {
    if (errors['config'] === undefined) errors[thenField] = 'required field missing';
  } else if (!Object.keys(errors).some((path) => path === thenField || path.startsWith(`${thenField}.`))) {
    return undefined;
  }
  return `failed conditional validation given value of field '${ifField}'`;
}
