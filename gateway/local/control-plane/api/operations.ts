import { randomBytes } from 'node:crypto';
import type { FieldErrors } from '../schema/field-schema.ts';
import {
  KongValidationError,
  isUuid,
  newId,
  schemaViolation,
  uniqueViolation,
  validateEntity,
} from '../schema/entity-schemas.ts';
import type { PluginRegistry } from '../schema/plugins/registry.ts';
import { parseServiceUrl } from '../declarative/load-config.ts';
import { removeOrphans } from '../declarative/sync.ts';
import type { Consumer, EntityType, EntityTypes, KeyAuthCredential, Plugin, Route, Service } from '../db/entities.ts';
import { checkRoute, consumerFrom, credentialFrom, pluginFrom, routeFrom, serviceFrom } from '../db/entity-rules.ts';
import type { Draft, EntityStore, Snapshot } from '../db/entity-store.ts';

/** An Admin API lookup found nothing: 404 {"message":"Not found"}. */
export class NotFound extends Error {}

type Input = Record<string, unknown>;
/** The parent a nested plugin endpoint names: /consumers/{c}/plugins, /services/{s}/plugins, /routes/{r}/plugins. */
export interface PluginScope {
  consumer?: string;
  service?: string;
  route?: string;
}
const seconds = (ms: number) => Math.floor(ms / 1000);

function fail(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw new KongValidationError(schemaViolation(errors));
}

/**
 * Kong's rule for `/{entities}/{id or endpoint key}`: a UUID is looked up by id only, anything else
 * by the endpoint key (kong/api/endpoints.lua, select_entity's `not uuid.is_valid_uuid(key.id)`).
 */
function byEndpointKey<T extends EntityType>(
  view: Snapshot | Draft,
  type: T,
  idOrKey: string,
  endpointKey: (entity: EntityTypes[T]) => unknown,
): EntityTypes[T] | undefined {
  return isUuid(idOrKey) ? view.get(type, idOrKey) : view.list(type).find((e) => endpointKey(e) === idOrKey);
}

/** Consumers are addressed by id or username (endpoint_key). */
export function findConsumer(view: Snapshot | Draft, idOrUsername: string): Consumer | undefined {
  return byEndpointKey(view, 'consumers', idOrUsername, (c) => c.username);
}

/** Services and routes are addressed by id or name (endpoint_key). */
export function findNamed<T extends 'services' | 'routes'>(view: Snapshot | Draft, type: T, idOrName: string): (T extends 'services' ? Service : Route) | undefined {
  const found = byEndpointKey(view, type, idOrName, (e) => e.name);
  return found as (T extends 'services' ? Service : Route) | undefined;
}

/** Plugins are addressed by id or instance_name (endpoint_key, kong/db/schema/entities/plugins.lua). */
export function findPlugin(view: Snapshot | Draft, idOrInstanceName: string): Plugin | undefined {
  return byEndpointKey(view, 'plugins', idOrInstanceName, (p) => p.instance_name);
}

/** Kong's foreign key violation (kong/db/errors.lua, code 4): 400. */
function foreignKeyViolation(referencing: string, referenced: string): KongValidationError {
  return new KongValidationError({
    code: 4,
    name: 'foreign key violation',
    message: `an existing '${referencing}' entity references this '${referenced}' entity`,
    fields: { '@referenced_by': referencing },
  });
}

/** Credentials are addressed by id or key (endpoint_key). */
function findCredential(view: Snapshot | Draft, consumerId: string | undefined, idOrKey: string): KeyAuthCredential | undefined {
  const found = byEndpointKey(view, 'keyauth_credentials', idOrKey, (k) => k.key);
  return found && (!consumerId || found.consumer.id === consumerId) ? found : undefined;
}

/**
 * The Admin API's writes, with Kong's validation, uniqueness rules and cascades. Each runs as one
 * store write: it is persisted and published whole or not at all.
 */
export class AdminOperations {
  constructor(
    private readonly store: EntityStore,
    private readonly registry: PluginRegistry,
    private readonly now: () => number,
  ) {}

  get snapshot(): Snapshot {
    return this.store.snapshot;
  }

  // services -------------------------------------------------------------------------------------

  private buildService(draft: Draft, input: Input, existing: Service | undefined): Service {
    const errors: FieldErrors = {};
    const { url, ...rest } = input;
    const given = typeof url === 'string' ? { ...rest, ...parseServiceUrl(url, 'url', []) } : rest;
    if (url !== undefined && typeof url !== 'string') errors.url = 'expected a string';
    if (typeof url === 'string' && !URL.canParse(url)) errors.url = 'missing host in url';
    const fields = validateEntity('services', given, errors);
    fail(errors);
    const name = fields.name as string | null;
    if (name && draft.list('services').some((e) => e.name === name && e.id !== existing?.id)) throw new KongValidationError(uniqueViolation('name', name), 409);
    const now = seconds(this.now());
    const id = existing?.id ?? (isUuid(fields.id) ? fields.id : newId());
    return serviceFrom(fields, { id, created_at: existing?.created_at ?? now, updated_at: now });
  }

  createService(input: Input): Promise<Service> {
    return this.store.write((draft) => {
      if (isUuid(input.id) && draft.get('services', input.id)) throw new KongValidationError(uniqueViolation('id', input.id), 409);
      const service = this.buildService(draft, input, undefined);
      draft.put('services', service);
      return service;
    });
  }

  /** PATCH merges into the stored fields; PUT (`replace`) creates or replaces, the URL naming it. */
  writeService(idOrName: string, input: Input, replace: boolean): Promise<Service> {
    return this.store.write((draft) => {
      const existing = findNamed(draft, 'services', idOrName);
      if (!existing && !replace) throw new NotFound();
      const base = replace ? {} : withoutMeta(existing!);
      const byUrl = isUuid(idOrName) ? { id: existing?.id ?? idOrName } : { name: idOrName };
      const service = this.buildService(draft, { ...base, ...input, ...byUrl, ...(existing ? { id: existing.id } : {}) }, existing);
      draft.put('services', service);
      return service;
    });
  }

  deleteService(idOrName: string): Promise<void> {
    return this.store.write((draft) => {
      const existing = findNamed(draft, 'services', idOrName);
      if (!existing) return;
      if (draft.list('routes').some((r) => r.service?.id === existing.id)) throw foreignKeyViolation('routes', 'services');
      draft.delete('services', existing.id);
      removeOrphans(draft);
    });
  }

  // routes ---------------------------------------------------------------------------------------

  private buildRoute(draft: Draft, input: Input, existing: Route | undefined): Route {
    const errors: FieldErrors = {};
    const fields = validateEntity('routes', input, errors);
    let service: { id: string } | null = null;
    const given = fields.service as { id?: string; name?: string } | null;
    if (given) {
      const target = given.id ?? given.name ?? '';
      const found = findNamed(draft, 'services', target);
      if (found) service = { id: found.id };
      else errors.service = `the foreign key '{id="${target}"}' does not reference an existing 'services' entity.`;
    }
    fail(errors);
    const name = fields.name as string | null;
    if (name && draft.list('routes').some((e) => e.name === name && e.id !== existing?.id)) throw new KongValidationError(uniqueViolation('name', name), 409);
    const now = seconds(this.now());
    const id = existing?.id ?? (isUuid(fields.id) ? fields.id : newId());
    const route = routeFrom(fields, service, { id, created_at: existing?.created_at ?? now, updated_at: now });
    checkRoute(route, errors);
    fail(errors);
    return route;
  }

  createRoute(input: Input, scope: { service?: string }): Promise<Route> {
    return this.store.write((draft) => {
      if (isUuid(input.id) && draft.get('routes', input.id)) throw new KongValidationError(uniqueViolation('id', input.id), 409);
      const route = this.buildRoute(draft, { ...input, ...this.serviceScope(draft, scope) }, undefined);
      draft.put('routes', route);
      return route;
    });
  }

  writeRoute(idOrName: string, input: Input, replace: boolean, scope: { service?: string }): Promise<Route> {
    return this.store.write((draft) => {
      const pinned = this.serviceScope(draft, scope);
      const existing = findNamed(draft, 'routes', idOrName);
      if (existing && pinned.service && existing.service?.id !== pinned.service.id) throw new NotFound();
      if (!existing && !replace) throw new NotFound();
      const base = replace ? {} : withoutMeta(existing!);
      const byUrl = isUuid(idOrName) ? { id: existing?.id ?? idOrName } : { name: idOrName };
      const route = this.buildRoute(draft, { ...base, ...input, ...pinned, ...byUrl, ...(existing ? { id: existing.id } : {}) }, existing);
      draft.put('routes', route);
      return route;
    });
  }

  deleteRoute(idOrName: string, scope: { service?: string }): Promise<void> {
    return this.store.write((draft) => {
      const pinned = this.serviceScope(draft, scope);
      const existing = findNamed(draft, 'routes', idOrName);
      if (!existing) return;
      if (pinned.service && existing.service?.id !== pinned.service.id) throw new NotFound();
      draft.delete('routes', existing.id);
      removeOrphans(draft);
    });
  }

  /** Nested endpoints (/services/{s}/routes) pin the route's service; an unknown one is 404. */
  private serviceScope(draft: Draft, scope: { service?: string }): { service?: { id: string } } {
    if (scope.service === undefined) return {};
    const service = findNamed(draft, 'services', scope.service);
    if (!service) throw new NotFound();
    return { service: { id: service.id } };
  }

  // consumers ------------------------------------------------------------------------------------

  private buildConsumer(draft: Draft, input: Input, existing: Consumer | undefined): Consumer {
    const errors: FieldErrors = {};
    const fields = validateEntity('consumers', input, errors);
    if (!fields.username && !fields.custom_id) errors['@entity'] = "at least one of these fields must be non-empty: 'custom_id', 'username'";
    fail(errors);
    for (const field of ['username', 'custom_id'] as const) {
      const value = fields[field] as string | null;
      if (value && draft.list('consumers').some((c) => c[field] === value && c.id !== existing?.id)) {
        throw new KongValidationError(uniqueViolation(field, value), 409);
      }
    }
    const now = seconds(this.now());
    const id = existing?.id ?? (isUuid(fields.id) ? fields.id : newId());
    return consumerFrom(fields, { id, created_at: existing?.created_at ?? now, updated_at: now });
  }

  createConsumer(input: Input): Promise<Consumer> {
    return this.store.write((draft) => {
      if (isUuid(input.id) && draft.get('consumers', input.id)) throw new KongValidationError(uniqueViolation('id', input.id), 409);
      const consumer = this.buildConsumer(draft, input, undefined);
      draft.put('consumers', consumer);
      return consumer;
    });
  }

  updateConsumer(idOrUsername: string, patch: Input): Promise<Consumer> {
    return this.store.write((draft) => {
      const existing = findConsumer(draft, idOrUsername);
      if (!existing) throw new NotFound();
      const { created_at: _c, updated_at: _u, id: _i, ...current } = existing;
      const consumer = this.buildConsumer(draft, { ...current, ...patch, id: existing.id }, existing);
      draft.put('consumers', consumer);
      return consumer;
    });
  }

  /** PUT: create or replace; the URL's value is the id when it looks like one, else the username. */
  upsertConsumer(idOrUsername: string, input: Input): Promise<Consumer> {
    return this.store.write((draft) => {
      const byUrl = isUuid(idOrUsername) ? { id: idOrUsername } : { username: idOrUsername };
      if (!isUuid(idOrUsername) && input.username !== undefined && input.username !== idOrUsername) {
        fail({ username: 'must match the username in the URL' });
      }
      const existing = findConsumer(draft, idOrUsername);
      const consumer = this.buildConsumer(draft, { ...input, ...byUrl }, existing);
      draft.put('consumers', consumer);
      return consumer;
    });
  }

  deleteConsumer(idOrUsername: string): Promise<void> {
    return this.store.write((draft) => {
      const existing = findConsumer(draft, idOrUsername);
      if (!existing) return;
      draft.delete('consumers', existing.id);
      removeOrphans(draft);
    });
  }

  // key-auth credentials -------------------------------------------------------------------------

  createCredential(consumerRef: string, input: Input): Promise<KeyAuthCredential> {
    return this.store.write((draft) => {
      const consumer = findConsumer(draft, consumerRef);
      if (!consumer) throw new NotFound();
      const credential = this.buildCredential(draft, consumer, input, undefined);
      draft.put('keyauth_credentials', credential);
      return credential;
    });
  }

  updateCredential(consumerRef: string, idOrKey: string, patch: Input, replace = false): Promise<KeyAuthCredential> {
    return this.store.write((draft) => {
      const consumer = findConsumer(draft, consumerRef);
      if (!consumer) throw new NotFound();
      const existing = findCredential(draft, consumer.id, idOrKey);
      if (!existing && !replace) throw new NotFound();
      const base = existing && !replace ? { key: existing.key, tags: existing.tags } : isUuid(idOrKey) ? { id: idOrKey } : { key: idOrKey };
      const credential = this.buildCredential(draft, consumer, { ...base, ...patch }, existing);
      draft.put('keyauth_credentials', credential);
      return credential;
    });
  }

  deleteCredential(consumerRef: string, idOrKey: string): Promise<void> {
    return this.store.write((draft) => {
      const consumer = findConsumer(draft, consumerRef);
      if (!consumer) throw new NotFound();
      const existing = findCredential(draft, consumer.id, idOrKey);
      if (!existing) throw new NotFound();
      draft.delete('keyauth_credentials', existing.id);
    });
  }

  private buildCredential(draft: Draft, consumer: Consumer, input: Input, existing: KeyAuthCredential | undefined): KeyAuthCredential {
    const errors: FieldErrors = {};
    const { consumer: _ignored, ...rest } = input;
    const fields = validateEntity('keyauth_credentials', rest, errors);
    fail(errors);
    // key: unique, auto-generated when omitted (kong/plugins/key-auth/daos.lua)
    const key = (fields.key as string | null) ?? randomBytes(16).toString('hex');
    const clash = draft.list('keyauth_credentials').find((k) => k.key === key && k.id !== existing?.id);
    if (clash) throw new KongValidationError(uniqueViolation('key', key), 409);
    const now = this.now();
    const id = existing?.id ?? (isUuid(fields.id) ? fields.id : newId());
    return credentialFrom({ ...fields, key }, consumer, { id, created_at: existing?.created_at ?? seconds(now) }, now);
  }

  /** Live credentials only: Kong does not return expired ttl rows. */
  liveCredential(credential: KeyAuthCredential): boolean {
    return credential.expires_at === null || credential.expires_at > this.now();
  }

  findCredential(consumerId: string | undefined, idOrKey: string): KeyAuthCredential | undefined {
    const found = findCredential(this.snapshot, consumerId, idOrKey);
    return found && this.liveCredential(found) ? found : undefined;
  }

  // plugins ----------------------------------------------------------------------------------

  createPlugin(input: Input, scope: PluginScope): Promise<Plugin> {
    return this.store.write((draft) => {
      const plugin = this.buildPlugin(draft, input, scope, undefined);
      draft.put('plugins', plugin);
      return plugin;
    });
  }

  updatePlugin(idOrInstanceName: string, patch: Input, scope: PluginScope, replace = false): Promise<Plugin> {
    return this.store.write((draft) => {
      const existing = findPlugin(draft, idOrInstanceName);
      if (existing && !this.inPluginScope(draft, existing, scope)) throw new NotFound();
      if (!existing && !replace) throw new NotFound();
      // A PUT by instance_name keeps it, replacing or not (kong/db/dao/init.lua upsert_by_<key>).
      const byUrl = isUuid(idOrInstanceName)
        ? { id: existing?.id ?? idOrInstanceName }
        : { instance_name: idOrInstanceName, ...(existing ? { id: existing.id } : {}) };
      const merged = existing && !replace ? mergePlugin(existing, patch) : { ...patch, ...byUrl };
      const plugin = this.buildPlugin(draft, merged, scope, existing);
      draft.put('plugins', plugin);
      return plugin;
    });
  }

  deletePlugin(idOrInstanceName: string, scope: PluginScope): Promise<void> {
    return this.store.write((draft) => {
      const existing = findPlugin(draft, idOrInstanceName);
      if (!existing) return;
      if (!this.inPluginScope(draft, existing, scope)) throw new NotFound();
      draft.delete('plugins', existing.id);
    });
  }

  /** A nested endpoint (/consumers/{c}/plugins/{id}…) only reaches that parent's plugins. */
  private inPluginScope(draft: Draft, plugin: Plugin, scope: PluginScope): boolean {
    if (scope.consumer !== undefined && plugin.consumer?.id !== findConsumer(draft, scope.consumer)?.id) return false;
    if (scope.service !== undefined && plugin.service?.id !== findNamed(draft, 'services', scope.service)?.id) return false;
    if (scope.route !== undefined && plugin.route?.id !== findNamed(draft, 'routes', scope.route)?.id) return false;
    return true;
  }

  private buildPlugin(draft: Draft, input: Input, scope: PluginScope, existing: Plugin | undefined): Plugin {
    const errors: FieldErrors = {};
    const { config, ...rest } = input;
    const fields = validateEntity('plugins', rest, errors);
    const ref = (kind: 'consumer' | 'route' | 'service'): { id: string } | null => {
      const given = fields[kind] as { id?: string; name?: string; username?: string } | null;
      if (!given) return null;
      const target = given.id ?? given.name ?? given.username;
      const entity =
        kind === 'consumer'
          ? findConsumer(draft, target ?? '')
          : draft.list(kind === 'route' ? 'routes' : 'services').find((e) => e.id === target || e.name === target);
      if (!entity) errors[kind] = `the foreign key '{id="${String(target)}"}' does not reference an existing '${kind}' entity.`;
      return entity ? { id: entity.id } : null;
    };
    if (scope.consumer) {
      const consumer = findConsumer(draft, scope.consumer);
      if (!consumer) throw new NotFound();
      fields.consumer = { id: consumer.id };
    }
    for (const kind of ['service', 'route'] as const) {
      const ref = scope[kind];
      if (ref === undefined) continue;
      const entity = findNamed(draft, kind === 'service' ? 'services' : 'routes', ref);
      if (!entity) throw new NotFound();
      fields[kind] = { id: entity.id };
    }
    const consumer = ref('consumer');
    const route = ref('route');
    const service = ref('service');
    let validatedConfig: Record<string, unknown> = {};
    if (typeof fields.name === 'string') {
      validatedConfig = this.registry.validateConfig(
        fields.name,
        config,
        { consumer: !!consumer, route: !!route, service: !!service },
        errors,
      );
    }
    fail(errors);
    const name = fields.name as string;
    const instanceName = (fields.instance_name as string | null) ?? null;
    const clash = draft
      .list('plugins')
      .find(
        (p) =>
          p.id !== existing?.id &&
          p.name === name &&
          (p.instance_name ?? null) === instanceName &&
          (p.consumer?.id ?? null) === (consumer?.id ?? null) &&
          (p.route?.id ?? null) === (route?.id ?? null) &&
          (p.service?.id ?? null) === (service?.id ?? null),
      );
    if (clash) {
      throw new KongValidationError(
        {
          code: 5,
          name: 'unique constraint violation',
          message: `UNIQUE violation detected on '{consumer=${consumer ? `{id="${consumer.id}"}` : 'null'},name="${name}",route=${route ? `{id="${route.id}"}` : 'null'},service=${service ? `{id="${service.id}"}` : 'null'}}'`,
          fields: { name, consumer, route, service },
        },
        409,
      );
    }
    const now = seconds(this.now());
    const id = existing?.id ?? (isUuid(fields.id) ? fields.id : newId());
    return pluginFrom(
      { ...fields, name, instance_name: instanceName, config: validatedConfig },
      { consumer, route, service },
      { id, created_at: existing?.created_at ?? now, updated_at: now },
    );
  }
}

/** A stored entity as input for a PATCH: without the fields Kong sets itself. */
function withoutMeta(entity: object): Input {
  const { created_at: _c, updated_at: _u, ...rest } = entity as Input;
  return rest;
}

/** PATCH merges config field by field, as Kong does for record fields. */
function mergePlugin(existing: Plugin, patch: Input): Input {
  const { created_at: _c, updated_at: _u, ...current } = existing;
  const merged: Input = { ...current, ...patch };
  if (patch.config && typeof patch.config === 'object') merged.config = { ...existing.config, ...(patch.config as Input) };
  return merged;
}
