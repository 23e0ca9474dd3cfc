import { isUuid, newId } from '../config/entity-schemas.ts';
import type { Declared, DeclarativeConfig } from '../config/declarative.ts';
import type { Consumer, EntityType, KeyAuthCredential, Plugin, Route, Service } from './entities.ts';
import type { Draft } from './entity-store.ts';

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
    else if (JSON.stringify(withoutTimes(existing)) !== JSON.stringify(withoutTimes(entity))) summary.updated += 1;
    else (entity as { updated_at?: number }).updated_at = (existing as { updated_at?: number }).updated_at;
    draft.put(type as 'services', entity as unknown as Service);
    kept.add(`${type}:${id}`);
    return entity;
  };

  const serviceIds = new Map<string, string>();
  for (const declared of config.services) {
    const f = declared.fields;
    const existing = draft.list('services').find((s) => s.name === f.name);
    const service = upsert<Service>('services', existing, declared, (base) => ({
      ...base,
      name: f.name as string,
      protocol: f.protocol as Service['protocol'],
      host: f.host as string,
      port: f.port as number,
      path: (f.path as string | null) ?? null,
      retries: f.retries as number,
      connect_timeout: f.connect_timeout as number,
      write_timeout: f.write_timeout as number,
      read_timeout: f.read_timeout as number,
      enabled: f.enabled as boolean,
      tags: f.tags as string[] | null,
      updated_at: nowSeconds,
    }));
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
    const route = upsert<Route>('routes', existing, declared, (base) => ({
      ...base,
      name: f.name as string,
      service: serviceId ? { id: serviceId } : null,
      protocols: f.protocols as string[],
      methods: (f.methods as string[] | null) ?? null,
      hosts: (f.hosts as string[] | null) ?? null,
      paths: (f.paths as string[] | null) ?? null,
      headers: (f.headers as Record<string, string[]> | null) ?? null,
      strip_path: f.strip_path as boolean,
      preserve_host: f.preserve_host as boolean,
      regex_priority: f.regex_priority as number,
      path_handling: f.path_handling as Route['path_handling'],
      https_redirect_status_code: f.https_redirect_status_code as number,
      request_buffering: f.request_buffering as boolean,
      response_buffering: f.response_buffering as boolean,
      tags: f.tags as string[] | null,
      updated_at: nowSeconds,
    }));
    if (route) routeIds.set(route.name!, route.id).set(route.id, route.id);
  }

  const consumerIds = new Map<string, string>();
  for (const declared of config.consumers) {
    const f = declared.fields;
    const existing = draft
      .list('consumers')
      .find((c) => (f.username != null && c.username === f.username) || (f.username == null && f.custom_id != null && c.custom_id === f.custom_id));
    const consumer = upsert<Consumer>('consumers', existing, declared, (base) => ({
      ...base,
      username: (f.username as string | null) ?? null,
      custom_id: (f.custom_id as string | null) ?? null,
      tags: f.tags as string[] | null,
      updated_at: nowSeconds,
    }));
    if (consumer) {
      for (const key of [consumer.username, consumer.custom_id, consumer.id]) if (key) consumerIds.set(key, consumer.id);
    }
  }

  for (const declared of config.keyauthCredentials) {
    const f = declared.fields;
    const consumerId = consumerIds.get(declared.refs.consumer!);
    if (!consumerId) continue;
    const existing = draft.list('keyauth_credentials').find((k) => k.key === f.key);
    upsert<KeyAuthCredential>('keyauth_credentials', existing, declared, (base) => ({
      id: base.id,
      created_at: base.created_at,
      consumer: { id: consumerId },
      key: f.key as string,
      tags: f.tags as string[] | null,
      ttl: (f.ttl as number | null) ?? null,
      expires_at: typeof f.ttl === 'number' && f.ttl > 0 ? (existing?.expires_at ?? (nowSeconds + f.ttl) * 1000) : null,
    }));
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
    upsert<Plugin>('plugins', existing, declared, (base) => ({
      ...base,
      name: f.name as string,
      instance_name: (f.instance_name as string | null) ?? null,
      config: f.config as Record<string, unknown>,
      enabled: f.enabled as boolean,
      protocols: f.protocols as string[],
      service,
      route,
      consumer,
      tags: f.tags as string[] | null,
      updated_at: nowSeconds,
    }));
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

function withoutTimes(entity: object): object {
  const { created_at: _c, updated_at: _u, ...rest } = entity as Record<string, unknown>;
  return rest;
}
