import { AdminApiError, expectOk, pages, type Consumer, type KeyAuthCredential, type KongAdminClient, type Plugin } from '../kong-admin/client.ts';
import { digestApiKey, generateApiKey, isHashedCredential, keyFingerprint, storedCredential } from './api-keys.ts';
import { limitsFor, type Catalogue, type Limits, type PlanName } from './plans.ts';

/**
 * Tags on everything the scripts create. They never include kong.yml's select tag
 * (`animal-store`), so `deck gateway sync` of kong.yml never deletes provisioned consumers.
 */
export const CONSUMER_TAG = 'petstore-consumer';
/** kong.yml's select tag (`_info.select_tags`): what carries it belongs to kong.yml, never to the CLI. */
export const KONG_YML_SELECT_TAG = 'animal-store';
export const planTag = (plan: PlanName) => `plan:${plan}`;
/**
 * The ACL group every consumer of ours is in: kong.yml's animal-store-access plugin refuses any
 * other consumer on our routes (another team's, on a shared Kong; docs/shared-kong.md).
 */
export const CONSUMER_GROUP = 'animal-store';
const DEFAULT_GRACE_SECONDS = 24 * 3600;

/**
 * Where a plan plugin counts: rate-limiting's `policy`, `fault_tolerant`, and with policy redis
 * its `redis` record and `sync_rate`, as kong.yml's fallback rate-limiting plugin has them.
 */
export type CounterSettings = { policy: string; fault_tolerant?: boolean; redis?: Record<string, unknown>; sync_rate?: number };

export interface ConsumerSummary {
  username: string;
  id: string;
  customId: string | null;
  plan: PlanName | null;
  limits: Limits | null;
  keys: KeySummary[];
  createdAt: number;
}

/** A credential as `show` describes it: never its key, nor the digest Kong stores. */
export interface KeySummary {
  id: string;
  createdAt: number;
  expiresInSeconds: number | null;
  /** keyFingerprint (scripts/lib/api-keys.ts): 8 hex, the same whether the key is stored hashed or not. */
  fingerprint: string;
  /** `sha256`: Kong holds the key's digest; `plaintext`: the key itself, until hash-keys runs. */
  stored: 'sha256' | 'plaintext';
}

export interface IssuedKey {
  username: string;
  plan: PlanName;
  /** The key, printed once; Kong only ever receives its digest. */
  key: string;
  fingerprint: string;
  consumerId: string;
  limits: Limits;
}

/** What `hash-keys` did, or with `dryRun` would do. */
export interface HashKeysResult {
  dryRun: boolean;
  consumers: number;
  hashed: number;
  alreadyHashed: number;
}

type Rollback = () => Promise<unknown>;

function summarizeKey(credential: KeyAuthCredential): KeySummary {
  const hashed = isHashedCredential(credential);
  return {
    id: credential.id,
    createdAt: credential.created_at,
    expiresInSeconds: credential.ttl ?? null,
    fingerprint: keyFingerprint(hashed ? credential.key : digestApiKey(credential.key)),
    stored: hashed ? 'sha256' : 'plaintext',
  };
}

/** A consumer the CLI may act on: it carries the CLI's tag and not kong.yml's select tag. */
export function isManaged(consumer: Consumer): boolean {
  const tags = consumer.tags ?? [];
  return tags.includes(CONSUMER_TAG) && !tags.includes(KONG_YML_SELECT_TAG);
}

/** Why the CLI refuses to touch a consumer it does not manage. */
function notManaged(username: string, consumer: Consumer): AdminApiError {
  if ((consumer.tags ?? []).includes(KONG_YML_SELECT_TAG)) {
    return new AdminApiError(`consumer ${username} belongs to gateway/kong.yml (tag ${KONG_YML_SELECT_TAG}); change it there, not with this CLI`);
  }
  return new AdminApiError(`consumer ${username} is not managed by this CLI (it lacks the tag ${CONSUMER_TAG})`);
}

/**
 * What an admin does to API consumers, each command all-or-nothing from the admin's view: when
 * a step fails, what the earlier steps created is undone before the error is reported.
 */
export class Provisioning {
  constructor(
    private readonly kong: KongAdminClient,
    private readonly catalogue: Catalogue,
  ) {}

  private counters: Promise<CounterSettings> | undefined;

  /**
   * The counter settings of kong.yml's fallback rate-limiting plugin (on our services, no consumer,
   * tagged with kong.yml's select tag): plan plugins count where it counts, so a consumer's plan
   * and the fallback never disagree. kong.yml takes them from DECK_RATE_LIMIT_POLICY and
   * DECK_RATE_LIMIT_REDIS_*; a gateway without that plugin counts locally. Read once per command.
   */
  private counterSettings(): Promise<CounterSettings> {
    this.counters ??= (async () => {
      const page = (offset: string | undefined) =>
        this.kong
          .GET('/plugins', { params: { query: { tags: KONG_YML_SELECT_TAG, offset } } })
          // Kong's OpenAPI documents one plugin where /plugins answers a page of them.
          .then((result) => expectOk(result, "reading kong.yml's rate-limiting plugin") as unknown as { data?: Plugin[]; offset?: string; next?: string | null });
      for await (const plugin of pages(page)) {
        if (plugin.name !== 'rate-limiting' || plugin.consumer || plugin.route) continue;
        const config = plugin.config as Record<string, unknown>;
        const policy = String(config.policy ?? 'local');
        return {
          policy,
          ...(typeof config.fault_tolerant === 'boolean' ? { fault_tolerant: config.fault_tolerant } : {}),
          ...(policy === 'redis' ? { redis: config.redis as Record<string, unknown>, sync_rate: config.sync_rate as number } : {}),
        };
      }
      return { policy: 'local' };
    })();
    return this.counters;
  }

  private async planConfig(limits: Limits): Promise<Record<string, unknown>> {
    return { minute: limits.minute, day: limits.day, limit_by: 'consumer', ...(await this.counterSettings()) };
  }

  private async withRollback<T>(steps: (onRollback: (undo: Rollback) => void) => Promise<T>): Promise<T> {
    const undo: Rollback[] = [];
    try {
      return await steps((step) => undo.unshift(step));
    } catch (error) {
      const failures: string[] = [];
      for (const step of undo) {
        try {
          await step();
        } catch (rollbackError) {
          failures.push((rollbackError as Error).message);
        }
      }
      if (failures.length > 0) {
        throw new AdminApiError(`${(error as Error).message}; rolling back also failed: ${failures.join('; ')} (check the consumer by hand)`);
      }
      throw error;
    }
  }

  async findConsumer(username: string): Promise<Consumer | undefined> {
    const result = await this.kong.GET('/consumers/{consumer_username_or_id}', { params: { path: { consumer_username_or_id: username } } });
    if (result.response.status === 404) return undefined;
    return expectOk(result, `reading consumer ${username}`);
  }

  private async requireConsumer(username: string): Promise<Consumer> {
    const consumer = await this.findConsumer(username);
    if (!consumer) throw new AdminApiError(`consumer ${username} does not exist`);
    if (!isManaged(consumer)) throw notManaged(username, consumer);
    return consumer;
  }

  private async planPlugin(consumerId: string): Promise<Plugin | undefined> {
    const result = await this.kong.GET('/consumers/{consumer_username_or_id}/plugins', { params: { path: { consumer_username_or_id: consumerId } } });
    const page = expectOk(result, 'reading the consumer plugins') as { data?: Plugin[] };
    return page.data?.find((plugin) => plugin.name === 'rate-limiting');
  }

  private async keys(consumerId: string): Promise<KeyAuthCredential[]> {
    const all: KeyAuthCredential[] = [];
    for await (const credential of pages((offset) =>
      this.kong
        .GET('/consumers/{consumer_username_or_id}/key-auth', { params: { path: { consumer_username_or_id: consumerId }, query: { offset } } })
        .then((result) => expectOk(result, 'listing keys')),
    )) {
      all.push(credential);
    }
    return all;
  }

  /** Adds a credential holding `credential.key` as is: callers pass what storedCredential built. */
  private async addCredential(consumerId: string, credential: { key: string; tags: string[]; ttl?: number }, what: string) {
    return expectOk(
      await this.kong.POST('/consumers/{consumer_username_or_id}/key-auth', { params: { path: { consumer_username_or_id: consumerId } }, body: credential }),
      what,
      true,
    );
  }

  /** Puts the consumer in CONSUMER_GROUP; idempotent (a PUT of the group). */
  private async joinGroup(consumerId: string): Promise<void> {
    expectOk(
      await this.kong.PUT('/consumers/{consumer_username_or_id}/acls/{group_or_id}', {
        params: { path: { consumer_username_or_id: consumerId, group_or_id: CONSUMER_GROUP } },
        body: { tags: [CONSUMER_TAG] },
      }),
      `putting the consumer in the ACL group ${CONSUMER_GROUP}`,
    );
  }

  private async inGroup(consumerId: string): Promise<boolean> {
    for await (const acl of pages((offset) =>
      this.kong
        .GET('/consumers/{consumer_username_or_id}/acls', { params: { path: { consumer_username_or_id: consumerId }, query: { offset } } })
        .then((result) => expectOk(result, 'listing the consumer\'s ACL groups')),
    )) {
      if (acl.group === CONSUMER_GROUP) return true;
    }
    return false;
  }

  private async deleteCredential(consumerId: string, credentialId: string, what: string): Promise<void> {
    expectOk(
      await this.kong.DELETE('/consumers/{consumer_username_or_id}/key-auth/{credential_id_or_key}', {
        params: { path: { consumer_username_or_id: consumerId, credential_id_or_key: credentialId } },
      }),
      what,
    );
  }

  /** A new key for the consumer: Kong receives its digest, the caller gets the key to print once. */
  private async issueKey(consumerId: string, what: string): Promise<{ key: string; fingerprint: string; credential: KeyAuthCredential }> {
    // the group first: should the key fail, membership alone lets no one in
    await this.joinGroup(consumerId);
    const key = generateApiKey();
    const stored = storedCredential(key, [CONSUMER_TAG]);
    const credential = await this.addCredential(consumerId, stored, what);
    return { key, fingerprint: keyFingerprint(stored.key), credential };
  }

  async create(input: { username: string; plan: PlanName; customId?: string; limits?: Partial<Limits> }): Promise<IssuedKey> {
    const limits = limitsFor(this.catalogue, input.plan, input.limits);
    if (await this.findConsumer(input.username)) throw new AdminApiError(`consumer ${input.username} already exists`);
    return this.withRollback(async (onRollback) => {
      const consumer = expectOk(
        await this.kong.POST('/consumers', {
          body: { username: input.username, custom_id: input.customId, tags: [CONSUMER_TAG, planTag(input.plan)] } as {
            username: string;
            custom_id: string;
            tags: string[];
          },
        }),
        `creating consumer ${input.username}`,
      );
      // Deleting the consumer deletes its credentials and plugins (Kong cascades).
      onRollback(() => this.kong.DELETE('/consumers/{consumer_username_or_id}', { params: { path: { consumer_username_or_id: consumer.id! } } }));
      const { key, fingerprint } = await this.issueKey(consumer.id!, 'creating the API key');
      expectOk(
        await this.kong.POST('/consumers/{consumer_username_or_id}/plugins', {
          params: { path: { consumer_username_or_id: consumer.id! } },
          body: { name: 'rate-limiting', config: await this.planConfig(limits), tags: [CONSUMER_TAG, planTag(input.plan)] } as never,
        }),
        `applying plan ${input.plan}`,
      );
      return { username: input.username, plan: input.plan, key, fingerprint, consumerId: consumer.id!, limits };
    });
  }

  private async summarize(consumer: Consumer): Promise<ConsumerSummary> {
    const plan = (consumer.tags ?? []).find((tag) => tag.startsWith('plan:'))?.slice(5) as PlanName | undefined;
    const plugin = await this.planPlugin(consumer.id!);
    const config = plugin?.config as { minute?: number; day?: number } | undefined;
    const keys = await this.keys(consumer.id!);
    return {
      username: consumer.username ?? '',
      id: consumer.id!,
      customId: (consumer.custom_id as string | null | undefined) ?? null,
      plan: plan ?? null,
      limits: config?.minute !== undefined && config.day !== undefined ? { minute: config.minute, day: config.day } : null,
      keys: keys.map(summarizeKey),
      createdAt: consumer.created_at ?? 0,
    };
  }

  async show(username: string): Promise<ConsumerSummary> {
    return this.summarize(await this.requireConsumer(username));
  }

  /** Consumers the scripts manage, optionally of one plan and/or carrying one more tag. */
  async *list(filter: { plan?: PlanName; tag?: string } = {}): AsyncGenerator<Consumer> {
    const tags = [CONSUMER_TAG, ...(filter.plan ? [planTag(filter.plan)] : []), ...(filter.tag ? [filter.tag] : [])].join(',');
    const page = (offset: string | undefined) =>
      this.kong
        .GET('/consumers', { params: { query: { tags, offset, size: 100 } } })
        .then((result) => expectOk(result, 'listing consumers'));
    for await (const consumer of pages(page)) {
      if (isManaged(consumer)) yield consumer;
    }
  }

  async setPlan(username: string, plan: PlanName, custom?: Partial<Limits>): Promise<{ username: string; plan: PlanName; limits: Limits }> {
    const limits = limitsFor(this.catalogue, plan, custom);
    const consumer = await this.requireConsumer(username);
    return this.withRollback(async (onRollback) => {
      const existing = await this.planPlugin(consumer.id!);
      const tags = [CONSUMER_TAG, planTag(plan)];
      if (existing) {
        expectOk(
          await this.kong.PATCH('/plugins/{plugin_id}', { params: { path: { plugin_id: existing.id! } }, body: { config: await this.planConfig(limits), tags } as never }),
          'updating the plan limits',
        );
        onRollback(() => this.kong.PATCH('/plugins/{plugin_id}', { params: { path: { plugin_id: existing.id! } }, body: { config: existing.config, tags: existing.tags } as never }));
      } else {
        const created = expectOk(
          await this.kong.POST('/consumers/{consumer_username_or_id}/plugins', {
            params: { path: { consumer_username_or_id: consumer.id! } },
            body: { name: 'rate-limiting', config: await this.planConfig(limits), tags } as never,
          }),
          'applying the plan limits',
        );
        onRollback(() => this.kong.DELETE('/plugins/{plugin_id}', { params: { path: { plugin_id: created.id! } } }));
      }
      const otherTags = (consumer.tags ?? []).filter((tag) => !tag.startsWith('plan:') && tag !== CONSUMER_TAG);
      expectOk(
        await this.kong.PATCH('/consumers/{consumer_username_or_id}', {
          params: { path: { consumer_username_or_id: consumer.id! } },
          body: { tags: [...tags, ...otherTags] } as never,
        }),
        'tagging the consumer with its plan',
      );
      return { username, plan, limits };
    });
  }

  /**
   * A new key now; the old ones keep working for `graceSeconds` through the credential ttl, so
   * clients can switch without downtime.
   */
  async rotateKey(
    username: string,
    graceSeconds = DEFAULT_GRACE_SECONDS,
  ): Promise<IssuedKey & { graceSeconds: number; previousKeys: number }> {
    const consumer = await this.requireConsumer(username);
    const summary = await this.summarize(consumer);
    const old = await this.keys(consumer.id!);
    return this.withRollback(async (onRollback) => {
      const { key, fingerprint, credential: created } = await this.issueKey(consumer.id!, 'creating the new key');
      onRollback(() => this.deleteCredential(consumer.id!, created.id, 'removing the new key'));
      for (const credential of old) {
        // A grace of 0 revokes the old keys at once.
        if (graceSeconds === 0) {
          await this.deleteCredential(consumer.id!, credential.id, 'revoking an old key');
          continue;
        }
        // Kong answers `"ttl": null` for a key that never expires (kong/api/endpoints.lua reads
        // with `nulls = true`): such a key gets the grace too. Only a key expiring sooner is kept.
        if (typeof credential.ttl === 'number' && credential.ttl <= graceSeconds) continue;
        expectOk(
          await this.kong.PATCH('/consumers/{consumer_username_or_id}/key-auth/{credential_id_or_key}', {
            params: { path: { consumer_username_or_id: consumer.id!, credential_id_or_key: credential.id } },
            body: { ttl: graceSeconds },
          }),
          'setting the grace period of an old key',
        );
      }
      return {
        username,
        plan: summary.plan ?? 'free',
        key,
        fingerprint,
        consumerId: consumer.id!,
        limits: summary.limits ?? limitsFor(this.catalogue, 'free'),
        graceSeconds,
        previousKeys: old.length,
      };
    });
  }

  /** Revokes every key of the consumer at once. */
  async revokeKeys(username: string): Promise<number> {
    const consumer = await this.requireConsumer(username);
    const keys = await this.keys(consumer.id!);
    for (const credential of keys) await this.deleteCredential(consumer.id!, credential.id, 'revoking a key');
    return keys.length;
  }

  /**
   * Replaces every plaintext credential of every managed consumer with one holding its digest,
   * the same tags plus KEY_HASH_TAG and the same time left. Per credential all-or-nothing: the
   * hashed one is created before the plaintext one is deleted, and removed again if that fails.
   * Idempotent: hashed credentials are left alone, and a run cut short between the two steps is
   * finished (the hashed twin is found, only the plaintext one is deleted).
   */
  async hashKeys(options: { dryRun: boolean }, progress: (line: string) => void): Promise<HashKeysResult> {
    const result: HashKeysResult = { dryRun: options.dryRun, consumers: 0, hashed: 0, alreadyHashed: 0 };
    for await (const consumer of this.list()) {
      result.consumers += 1;
      // a consumer made before the ACL group existed joins it here (docs/shared-kong.md)
      if (!options.dryRun && !(await this.inGroup(consumer.id!))) await this.joinGroup(consumer.id!);
      const credentials = await this.keys(consumer.id!);
      for (const credential of credentials) {
        if (isHashedCredential(credential)) {
          result.alreadyHashed += 1;
          continue;
        }
        const where = `key ${credential.id} of ${consumer.username}`;
        if (!options.dryRun) await this.hashCredential(consumer.id!, credential, credentials, where);
        result.hashed += 1;
        progress(`${options.dryRun ? 'would hash' : 'hashed'} ${where} (#${result.hashed})`);
      }
    }
    return result;
  }

  private async hashCredential(
    consumerId: string,
    plaintext: KeyAuthCredential,
    siblings: KeyAuthCredential[],
    where: string,
  ): Promise<void> {
    const stored = storedCredential(plaintext.key, plaintext.tags ?? []);
    const twin = siblings.find((credential) => isHashedCredential(credential) && credential.key === stored.key);
    await this.withRollback(async (onRollback) => {
      if (!twin) {
        // Kong reads a ttl as whole seconds left, 0 in the last second; a ttl of 0 would mean
        // "never expires", so the hashed key gets at least 1.
        const ttl = typeof plaintext.ttl === 'number' ? { ttl: Math.max(1, plaintext.ttl) } : {};
        const created = await this.addCredential(consumerId, { ...stored, ...ttl }, `hashing ${where}`);
        onRollback(() => this.deleteCredential(consumerId, created.id, `removing the hashed copy of ${where}`));
      }
      await this.deleteCredential(consumerId, plaintext.id, `deleting the plaintext ${where}`);
    });
  }

  async delete(username: string): Promise<void> {
    const consumer = await this.requireConsumer(username);
    expectOk(await this.kong.DELETE('/consumers/{consumer_username_or_id}', { params: { path: { consumer_username_or_id: consumer.id! } } }), `deleting ${username}`);
  }

  /** Pushes the catalogue's limits to every consumer of the given plans; reports progress. */
  async syncPlans(plans: PlanName[], progress: (done: number, plan: PlanName, username: string) => void): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const plan of plans) {
      if ('custom' in this.catalogue.plans[plan]) continue;
      counts[plan] = 0;
      for await (const consumer of this.list({ plan })) {
        await this.setPlan(consumer.username!, plan);
        counts[plan] += 1;
        progress(counts[plan], plan, consumer.username!);
      }
    }
    return counts;
  }
}
