import type { EntityService } from '../db/entity-service.ts';
import type { Draft } from '../db/entity-store.ts';
import type { AnyEntity, EntityName, EntityTypes } from '../schema/entities/index.ts';
import { KongError, SchemaViolation } from '../schema/errors.ts';
import { DeclarativeConfigError, type Declared, type DeclarativeConfig } from './load-config.ts';

export interface SyncSummary {
  created: number;
  updated: number;
  deleted: number;
}

/** An entity carries every select tag: it belongs to the declarative file's scope. */
export function inScope(tags: string[] | null, selectTags: readonly string[]): boolean {
  return selectTags.every((tag) => tags?.includes(tag));
}

/** JSON with object keys sorted: rows stored by an older version list their fields in another order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

const withoutTimes = (entity: AnyEntity): string => {
  const { created_at: _c, updated_at: _u, ...rest } = entity as AnyEntity & { updated_at?: number };
  return canonical(rest);
};

/** A problem of one declared entity, as `where: field: message` lines. */
function problemsOf(where: string, error: unknown): string[] {
  if (error instanceof SchemaViolation) {
    return Object.entries(error.errors).map(([field, message]) => (field === '@entity' || field.endsWith('.@entity') ? `${where}: ${message}` : `${where}: ${field}: ${message}`));
  }
  if (error instanceof KongError) return [`${where}: ${error.message}`];
  throw error;
}

/**
 * Makes the store match kong.yml the way `deck gateway sync --select-tag` makes Kong match it:
 * entities tagged with every select tag are created, updated or deleted to equal the file;
 * entities without those tags (e.g. consumers created through the Admin API) are left alone.
 * Entities are matched by natural key (name, username, key, consumer + group, plugin scope) and
 * keep their ids.
 * Each is written through the entity service, so kong.yml meets the Admin API's rules; every
 * problem is collected, and any refuses the whole file (DeclarativeConfigError).
 */
export function syncDeclarative(draft: Draft, config: DeclarativeConfig, service: EntityService): SyncSummary {
  const { selectTags } = config;
  const summary: SyncSummary = { created: 0, updated: 0, deleted: 0 };
  const kept = new Set<string>();
  const problems: string[] = [];
  const ids = { service: new Map<string, string>(), route: new Map<string, string>(), consumer: new Map<string, string>() };

  const upsert = <N extends EntityName>(name: N, declared: Declared, existing: EntityTypes[N] | undefined): EntityTypes[N] | undefined => {
    if (existing && !inScope(existing.tags, selectTags)) {
      problems.push(`${declared.where}: an entity with the same key exists outside the select tags [${selectTags.join(', ')}]; decK would refuse to create it`);
      return undefined;
    }
    const input: Record<string, unknown> = { ...declared.input, ...(existing ? { id: existing.id } : {}) };
    for (const [kind, known] of Object.entries(ids) as Array<[keyof typeof ids, Map<string, string>]>) {
      const ref = declared.refs[kind];
      if (ref === undefined) continue;
      const id = known.get(ref);
      if (!id) {
        problems.push(`${declared.where}: ${kind} '${ref}' is not in the file`);
        return undefined;
      }
      input[kind] = { id };
    }
    try {
      const entity = service.write(draft, name, input, existing, { mode: 'upsert', keepExpiry: existing !== undefined });
      if (!existing) summary.created += 1;
      else if (withoutTimes(existing) !== withoutTimes(entity)) summary.updated += 1;
      // An unchanged entity keeps its updated_at: a reload that changes nothing changes nothing.
      else draft.put(name, existing);
      kept.add(`${name}:${entity.id}`);
      return entity;
    } catch (error) {
      problems.push(...problemsOf(declared.where, error));
      return undefined;
    }
  };

  for (const declared of config.services) {
    const service_ = upsert('services', declared, draft.list('services').find((s) => s.name === declared.input.name));
    if (service_?.name) ids.service.set(service_.name, service_.id).set(service_.id, service_.id);
  }
  for (const declared of config.routes) {
    const route = upsert('routes', declared, draft.list('routes').find((r) => r.name === declared.input.name));
    if (route?.name) ids.route.set(route.name, route.id).set(route.id, route.id);
  }
  for (const declared of config.consumers) {
    const { username, custom_id: customId } = declared.input;
    const existing = draft
      .list('consumers')
      .find((c) => (username != null && c.username === username) || (username == null && customId != null && c.custom_id === customId));
    const consumer = upsert('consumers', declared, existing);
    if (consumer) for (const key of [consumer.username, consumer.custom_id, consumer.id]) if (key) ids.consumer.set(key, consumer.id);
  }
  for (const declared of config.keyauthCredentials) {
    if (!ids.consumer.has(declared.refs.consumer ?? '')) continue;
    upsert('keyauth_credentials', declared, draft.list('keyauth_credentials').find((k) => k.key === declared.input.key));
  }
  for (const declared of config.acls) {
    const consumerId = ids.consumer.get(declared.refs.consumer ?? '');
    if (!consumerId) continue;
    const existing = draft.list('acls').find((a) => a.consumer.id === consumerId && a.group === declared.input.group);
    // decK refuses the file too: "inserting acl-group <group> for consumer <c>: entity already exists".
    if (existing && kept.has(`acls:${existing.id}`)) problems.push(`${declared.where}: group '${existing.group}' is already declared for this consumer`);
    else upsert('acls', declared, existing);
  }
  for (const declared of config.plugins) {
    const scope = (kind: keyof typeof ids) => {
      const ref = declared.refs[kind];
      return ref === undefined ? null : (ids[kind].get(ref) ?? 'unresolved');
    };
    const existing = draft
      .list('plugins')
      .find(
        (p) =>
          p.name === declared.input.name &&
          (p.instance_name ?? null) === (declared.input.instance_name ?? null) &&
          (p.service?.id ?? null) === scope('service') &&
          (p.route?.id ?? null) === scope('route') &&
          (p.consumer?.id ?? null) === scope('consumer'),
      );
    upsert('plugins', declared, existing);
  }

  if (problems.length > 0) throw new DeclarativeConfigError(config.file, problems);

  // Delete what is in scope but no longer in the file, children first (Kong cascades).
  for (const name of ['plugins', 'acls', 'keyauth_credentials', 'routes', 'consumers', 'services'] as const) {
    for (const entity of draft.list(name)) {
      if (!inScope(entity.tags, selectTags) || kept.has(`${name}:${entity.id}`) || !draft.get(name, entity.id)) continue;
      try {
        service.remove(draft, name, entity.id);
        summary.deleted += 1;
      } catch (error) {
        problems.push(...problemsOf(`${name} ${entity.id}`, error));
      }
    }
  }
  if (problems.length > 0) throw new DeclarativeConfigError(config.file, problems);
  return summary;
}
