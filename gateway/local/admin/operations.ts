import { randomBytes } from 'node:crypto';
import type { FieldErrors } from '../config/field-schema.ts';
import {
  KongValidationError,
  isUuid,
  newId,
  schemaViolation,
  uniqueViolation,
  validateEntity,
} from '../config/entity-schemas.ts';
import type { PluginRegistry } from '../plugins/registry.ts';
import { removeOrphans } from '../store/declarative-sync.ts';
import type { Consumer, KeyAuthCredential, Plugin } from '../store/entities.ts';
import type { Draft, EntityStore, Snapshot } from '../store/entity-store.ts';

/** An Admin API lookup found nothing: 404 {"message":"Not found"}. */
export class NotFound extends Error {}

type Input = Record<string, unknown>;
const seconds = (ms: number) => Math.floor(ms / 1000);

function fail(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw new KongValidationError(schemaViolation(errors));
}

/** Consumers are addressed by id or username (endpoint_key). */
export function findConsumer(view: Snapshot | Draft, idOrUsername: string): Consumer | undefined {
  if (isUuid(idOrUsername)) {
    const byId = view.get('consumers', idOrUsername);
    if (byId) return byId;
  }
  return view.list('consumers').find((c) => c.username === idOrUsername);
}

/** Credentials are addressed by id or key (endpoint_key). */
function findCredential(view: Snapshot | Draft, consumerId: string | undefined, idOrKey: string): KeyAuthCredential | undefined {
  const found = (isUuid(idOrKey) ? view.get('keyauth_credentials', idOrKey) : undefined) ?? view.list('keyauth_credentials').find((k) => k.key === idOrKey);
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
    return {
      id: existing?.id ?? (isUuid(fields.id) ? fields.id : newId()),
      username: (fields.username as string | null) ?? null,
      custom_id: (fields.custom_id as string | null) ?? null,
      tags: (fields.tags as string[] | null) ?? null,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
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
    const ttl = fields.ttl as number | null;
    return {
      id: existing?.id ?? (isUuid(fields.id) ? fields.id : newId()),
      consumer: { id: consumer.id },
      key,
      tags: (fields.tags as string[] | null) ?? null,
      ttl: ttl && ttl > 0 ? ttl : null,
      created_at: existing?.created_at ?? seconds(now),
      expires_at: ttl && ttl > 0 ? now + ttl * 1000 : null,
    };
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

  createPlugin(input: Input, scope: { consumer?: string }): Promise<Plugin> {
    return this.store.write((draft) => {
      const plugin = this.buildPlugin(draft, input, scope, undefined);
      draft.put('plugins', plugin);
      return plugin;
    });
  }

  updatePlugin(id: string, patch: Input, scope: { consumer?: string }, replace = false): Promise<Plugin> {
    return this.store.write((draft) => {
      const existing = draft.get('plugins', id);
      if (existing && scope.consumer && existing.consumer?.id !== findConsumer(draft, scope.consumer)?.id) throw new NotFound();
      if (!existing && !replace) throw new NotFound();
      const merged = existing && !replace ? mergePlugin(existing, patch) : { ...patch, id };
      const plugin = this.buildPlugin(draft, merged, scope, existing);
      draft.put('plugins', plugin);
      return plugin;
    });
  }

  deletePlugin(id: string, scope: { consumer?: string }): Promise<void> {
    return this.store.write((draft) => {
      const existing = draft.get('plugins', id);
      if (!existing) return;
      if (scope.consumer && existing.consumer?.id !== findConsumer(draft, scope.consumer)?.id) throw new NotFound();
      draft.delete('plugins', id);
    });
  }

  private buildPlugin(draft: Draft, input: Input, scope: { consumer?: string }, existing: Plugin | undefined): Plugin {
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
    const consumer = ref('consumer');
    const route = ref('route');
    const service = ref('service');
    let validatedConfig: Record<string, unknown> = {};
    if (typeof fields.name === 'string') {
      validatedConfig = this.registry.validateConfig(fields.name, config, { consumer: !!consumer, route: !!route, service: !!service }, errors);
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
    return {
      id: existing?.id ?? (isUuid(fields.id) ? fields.id : newId()),
      name,
      instance_name: instanceName,
      config: validatedConfig,
      enabled: fields.enabled as boolean,
      protocols: fields.protocols as string[],
      consumer,
      route,
      service,
      tags: (fields.tags as string[] | null) ?? null,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
  }
}

/** PATCH merges config field by field, as Kong does for record fields. */
function mergePlugin(existing: Plugin, patch: Input): Input {
  const { created_at: _c, updated_at: _u, ...current } = existing;
  const merged: Input = { ...current, ...patch };
  if (patch.config && typeof patch.config === 'object') merged.config = { ...existing.config, ...(patch.config as Input) };
  return merged;
}
