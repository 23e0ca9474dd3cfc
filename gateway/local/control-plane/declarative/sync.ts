import { isUuid, newId } from '../schema/entity-schemas.ts';
import type { Declared, DeclarativeConfig } from './load-config.ts';
import type { Consumer, EntityType, KeyAuthCredential, Plugin, Route, Service } from '../db/entities.ts';
import type { Draft } from '../db/entity-store.ts';
import { checkRoute, consumerFrom, credentialFrom, pluginFrom, routeFrom, serviceFrom } from '../db/entity-rules.ts';

export interface SyncSummary {
  created: number;
  updated: number;
  deleted: number;
}

/** An entity carries every select tag: it belongs to the declarative file's scope. */
export function inScope(tags: string[] | null, selectTags: readonly string[]): boolean {
  return selectTags.every((tag) => tags?.includes(tag));
}

export class SyncError extends Error {}

/**
 * Makes the store match kong.yml the way `deck gateway sync --select-tag` makes Kong match it:
 * entities tagged with every select tag are created, updated or deleted to equal the file;
 * entities without those tags (e.g. consumers created through the Admin API) are left alone.
 * Entities are matched by natural key (name, username, key, plugin scope) and keep their ids.
 */
export function syncDeclarative(draft: Draft, config: DeclarativeConfig, nowSeconds: number): SyncSummary {
  const { selectTags } = config;
  const summary: SyncSummary = { created: 0, updated: 0, deleted: 0 };
  const kept = new Set<string>();
  const problems: string[] = [];

  const upsert = <T extends { id: string; created_at: number; tags: string[] | null }>(
    type: EntityType,
    existing: T | undefined,
    declared: Declared,
    build: (base: { id: string; created_at: number }) => T,
  ): T | undefined => {
    if (existing && !inScope(existing.tags, selectTags)) {
      problems.push(`${declared.where}: an entity with the same key exists outside the select tags [${selectTags.join(', ')}]; decK would refuse to create it`);
      return undefined;
    }
    const requestedId = declared.fields.id;
    const id = existing?.id ?? (isUuid(requestedId) ? requestedId : newId());
    const entity = build({ id, created_at: existing?.created_at ?? nowSeconds });
    if (!existing) summary.created += 1;
    else if (canonical(withoutTimes(existing)) !== canonical(withoutTimes(entity))) summary.updated += 1;
    else (entity as { updated_at?: number }).updated_at = (existing as { updated_at?: number }).updated_at;
    draft.put(type as 'services', entity as unknown as Service);
    kept.add(`${type}:${id}`);
    return entity;
  };

  const serviceIds = new Map<string, string>();
  for (const declared of config.services) {
    const f = declared.fields;
    const existing = draft.list('services').find((s) => s.name === f.name);
    const service = upsert<Service>('services', existing, declared, (base) => serviceFrom(f, { ...base, updated_at: nowSeconds }));
    if (service) serviceIds.set(service.name!, service.id).set(service.id, service.id);
  }

  const routeIds = new Map<string, string>();
  for (const declared of config.routes) {
    const f = declared.fields;
    const serviceId = declared.refs.service ? serviceIds.get(declared.refs.service) : undefined;
    if (declared.refs.service && !serviceId) {
      problems.push(`${declared.where}: service '${declared.refs.service}' is not in the file`);
      continue;
    }
    const existing = draft.list('routes').find((r) => r.name === f.name);
    const route = upsert<Route>('routes', existing, declared, (base) => routeFrom(f, serviceId ? { id: serviceId } : null, { ...base, updated_at: nowSeconds }));
    if (route) {
      const errors: Record<string, string> = {};
      checkRoute(route, errors);
      for (const [field, message] of Object.entries(errors)) problems.push(`${declared.where}: ${field === '@entity' ? '' : `${field}: `}${message}`);
    }
    if (route) routeIds.set(route.name!, route.id).set(route.id, route.id);
  }

  const consumerIds = new Map<string, string>();
  for (const declared of config.consumers) {
    const f = declared.fields;
    const existing = draft
      .list('consumers')
      .find(
        (c) =>
          (f.username != null && c.username === f.username) ||
          (f.username == null && f.custom_id != null && c.custom_id === f.custom_id),
      );
    const consumer = upsert<Consumer>('consumers', existing, declared, (base) => consumerFrom(f, { ...base, updated_at: nowSeconds }));
    if (consumer) {
      for (const key of [consumer.username, consumer.custom_id, consumer.id]) if (key) consumerIds.set(key, consumer.id);
    }
  }

  for (const declared of config.keyauthCredentials) {
    const f = declared.fields;
    const consumerId = consumerIds.get(declared.refs.consumer!);
    if (!consumerId) continue;
    const existing = draft.list('keyauth_credentials').find((k) => k.key === f.key);
    upsert<KeyAuthCredential>('keyauth_credentials', existing, declared, (base) =>
      credentialFrom(f, { id: consumerId }, base, nowSeconds * 1000, existing?.expires_at),
    );
  }

  for (const declared of config.plugins) {
    const f = declared.fields;
    const resolve = (kind: 'service' | 'route' | 'consumer', ids: Map<string, string>) => {
      const ref = declared.refs[kind];
      if (!ref) return null;
      const id = ids.get(ref);
      if (!id) {
        problems.push(`${declared.where}: ${kind} '${ref}' is not in the file`);
        return undefined;
      }
      return { id };
    };
    const service = resolve('service', serviceIds);
    const route = resolve('route', routeIds);
    const consumer = resolve('consumer', consumerIds);
    if (service === undefined || route === undefined || consumer === undefined) continue;
    const existing = draft
      .list('plugins')
      .find(
        (p) =>
          p.name === f.name &&
          (p.instance_name ?? null) === ((f.instance_name as string | null) ?? null) &&
          p.service?.id === service?.id &&
          p.route?.id === route?.id &&
          p.consumer?.id === consumer?.id,
      );
    upsert<Plugin>('plugins', existing, declared, (base) => pluginFrom(f, { service, route, consumer }, { ...base, updated_at: nowSeconds }));
  }

  if (problems.length > 0) throw new SyncError(problems.join('\n  - '));

  // Delete what is in scope but no longer in the file, children first (Kong cascades).
  for (const type of ['plugins', 'keyauth_credentials', 'routes', 'consumers', 'services'] as const) {
    for (const entity of draft.list(type)) {
      if (inScope(entity.tags, selectTags) && !kept.has(`${type}:${entity.id}`)) {
        draft.delete(type, entity.id);
        summary.deleted += 1;
      }
    }
  }
  removeOrphans(draft);
  return summary;
}

/** Kong's on_delete cascades: credentials and plugins of deleted consumers, routes, services. */
export function removeOrphans(draft: Draft): void {
  for (const credential of draft.list('keyauth_credentials')) {
    if (!draft.get('consumers', credential.consumer.id)) draft.delete('keyauth_credentials', credential.id);
  }
  for (const plugin of draft.list('plugins')) {
    if (
      (plugin.consumer && !draft.get('consumers', plugin.consumer.id)) ||
      (plugin.route && !draft.get('routes', plugin.route.id)) ||
      (plugin.service && !draft.get('services', plugin.service.id))
    ) {
      draft.delete('plugins', plugin.id);
    }
  }
}

/** JSON with object keys sorted: rows stored by an older version list their fields in another order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

function withoutTimes(entity: object): object {
  const { created_at: _c, updated_at: _u, ...rest } = entity as Record<string, unknown>;
  return rest;
}
