import type { KeyAuthCredential } from './admin-api/entities.ts';
import { isHashedCredential, storedCredential } from './api-keys.ts';
import { listConsumers, requireConsumer, summarizeConsumer, type IssuedKey } from './consumers.ts';
import type { ProvisioningContext } from './context.ts';
import { inGroup, joinGroup } from './consumer-group.ts';
import { ProvisioningError } from './errors.ts';
import {
  MAX_KEY_TTL_SECONDS,
  checkedName,
  checkedScopes,
  expiryInstant,
  issueKey,
  keySpec,
  summarizeKey,
  ttlUntil,
  type KeyExpiry,
  type KeyOptions,
  type KeySpec,
  type KeySummary,
  type NewKey,
} from './key-credentials.ts';
import { checkAlone, inTurn } from './key-change-turns.ts';
import { DEFAULT_KEY_NAME, REPLACED_TAG, isReplaced, keyNameOf, scopesOf, taggedExpiry, withoutExpiresAt } from './key-tags.ts';
import { limitsFor } from './plans.ts';
import { withRollback, type Undo } from './rollback.ts';

const DEFAULT_GRACE_SECONDS = 24 * 3600;

/** A key added beside the consumer's others: the key is in here once, for the caller to hand out. */
export interface AddedKey extends NewKey {
  username: string;
  consumerId: string;
}

/** Which key rotateKey replaces, and what its successor is like. */
export interface RotateKeyOptions extends KeyExpiry {
  /** The key's name; needed when the consumer has keys of several names. */
  name?: string;
  /** The new key's scopes; by default the replaced key's. */
  scopes?: readonly string[];
  /** How long the replaced key keeps working (default 24 h); 0 revokes it at once. */
  graceSeconds?: number;
}

export interface RotatedKey extends IssuedKey {
  graceSeconds: number;
  previousKeys: number;
  /**
   * When the last of the replaced keys stops working, unix seconds: the grace period's end, or
   * sooner for keys that expired sooner anyway. null when none is left working (none, or grace 0).
   */
  previousKeysUntil: number | null;
  /** Whether that is before the grace period's end: every replaced key expires sooner anyway. */
  previousKeysExpireFirst: boolean;
}

/** What `hashKeys` did, or with `dryRun` would do. */
export interface HashKeysResult {
  dryRun: boolean;
  consumers: number;
  hashed: number;
  alreadyHashed: number;
}

/** A key about to expire, and whose it is. */
export interface ExpiringKey {
  username: string;
  consumerId: string;
  key: KeySummary;
}

/** The consumer's keys, newest first: name, scopes, fingerprint and time left, never the key. */
export async function listKeys(context: ProvisioningContext, username: string): Promise<KeySummary[]> {
  const consumer = await requireConsumer(context, username);
  return newestFirst(await context.admin.keys(consumer.id)).map((credential) => summarizeKey(credential, context.now()));
}

const newestFirst = (credentials: KeyAuthCredential[]) => [...credentials].sort((a, b) => b.created_at - a.created_at);

/** A new key beside the consumer's others, under a name none of its live keys has. */
export async function addKey(context: ProvisioningContext, username: string, options: KeyOptions): Promise<AddedKey> {
  const spec = keySpec(options, context.now());
  return inTurn(context, username, async () => {
    const consumer = await requireConsumer(context, username);
    const before = await context.admin.keys(consumer.id);
    if (before.some((credential) => keyNameOf(credential) === spec.name)) {
      throw new ProvisioningError('key-exists', `consumer ${username} already has a key named ${spec.name} (rotating it replaces it)`);
    }
    return withRollback(async (onRollback) => {
      const { newKey, credential } = await issueKey(context.admin, consumer.id, spec, context.now, `creating the key ${spec.name}`, onRollback);
      await checkAlone(context, consumer.id, spec.name, before, credential);
      return { username, consumerId: consumer.id, ...newKey };
    });
  });
}

/** The keys of one name: `name`'s, or, without it, the consumer's keys if they all have one name. */
function keysNamed(
  username: string,
  credentials: KeyAuthCredential[],
  name: string | undefined,
): { name: string | undefined; keys: KeyAuthCredential[] } {
  if (name !== undefined) {
    const keys = credentials.filter((credential) => keyNameOf(credential) === name);
    if (keys.length === 0) throw new ProvisioningError('key-not-found', `consumer ${username} has no key named ${name}`);
    return { name, keys };
  }
  const names = [...new Set(credentials.map(keyNameOf))].sort();
  if (names.length > 1) {
    throw new ProvisioningError('key-ambiguous', `consumer ${username} has keys named ${names.join(', ')}: name the one to use`);
  }
  return { name: names[0], keys: credentials };
}

/**
 * The instant the successor of `credential` expires at: the replaced key's own, from its
 * `expires-at:` tag, or for a key without one, now plus the time left Kong reports (up to a
 * second early: Kong rounds it down). An expiring key never yields a key that does not: one with
 * less than a second left (Kong reports `"ttl": 0`, which as a new key's ttl would mean "never")
 * is refused, and the caller gives the new key an expiry.
 */
function successorExpiry(credential: KeyAuthCredential, nowMs: number): number | undefined {
  if (credential.ttl === null) return undefined;
  const instant = taggedExpiry(credential) ?? Math.floor(nowMs / 1000) + credential.ttl;
  if (instant * 1000 <= nowMs) {
    throw new ProvisioningError('key-options', `the key ${keyNameOf(credential)} has less than a second left: give the new key an expiry of its own`);
  }
  return instant;
}

/**
 * A new key now, in place of the key of that name; the old one keeps working for the grace
 * period through its ttl, so clients can switch without downtime (0 revokes it at once). The new
 * key keeps the old one's name, scopes and expiry instant unless told otherwise; keys of other
 * names are left alone.
 */
export async function rotateKey(context: ProvisioningContext, username: string, options: RotateKeyOptions = {}): Promise<RotatedKey> {
  const { admin } = context;
  const graceSeconds = options.graceSeconds ?? DEFAULT_GRACE_SECONDS;
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_KEY_TTL_SECONDS) {
    throw new ProvisioningError('key-options', `the grace period must be a whole number of seconds from 0 to ${MAX_KEY_TTL_SECONDS}`);
  }
  if (options.name !== undefined) checkedName(options.name);
  const scopes = options.scopes && checkedScopes(options.scopes);
  const expiresAt = expiryInstant(options, context.now());
  return inTurn(context, username, async () => {
    const consumer = await requireConsumer(context, username);
    const summary = await summarizeConsumer(context, consumer);
    const before = await admin.keys(consumer.id);
    const { name, keys: old } = keysNamed(username, before, options.name);
    // the key being replaced: a key rotated out before is not (Kong's created_at has whole seconds only)
    const live = newestFirst(old.filter((credential) => !isReplaced(credential)))[0];
    const newest = live ?? newestFirst(old)[0];
    // A replaced key's ttl is its grace period, not a lifetime to hand on: with every key of the
    // name replaced (a rotation cut short) only an `expires-at:` tag it kept is inherited.
    const inherited = expiresAt ?? (live ? successorExpiry(live, context.now()) : newest && taggedExpiry(newest));
    const spec: KeySpec = {
      name: checkedName(name ?? DEFAULT_KEY_NAME),
      scopes: scopes ?? (newest ? scopesOf(newest) : []),
      // a lifetime given fixes its instant at the insert (issueKey); else the instant given or inherited
      ...(options.expiresInSeconds !== undefined
        ? { expiresInSeconds: options.expiresInSeconds }
        : inherited !== undefined
          ? { expiresAt: inherited }
          : {}),
    };
    return withRollback(async (onRollback) => {
      const { newKey, credential: created } = await issueKey(admin, consumer.id, spec, context.now, 'creating the new key', onRollback);
      await checkAlone(context, consumer.id, spec.name, before, created);
      // Each old key's undo is registered before its write: a write that failed, or whose answer
      // was lost after Kong applied it, must not leave the live key replaced and expiring.
      const nowSeconds = Math.floor(context.now() / 1000);
      let previousKeysUntil: number | null = null;
      for (const credential of old) {
        if (graceSeconds === 0) {
          onRollback(() => restoreDeletedKey(context, consumer.id, credential));
          await admin.deleteKey(consumer.id, credential.id, 'revoking an old key');
          continue;
        }
        // Kong answers `"ttl": null` for a key that never expires (kong/api/endpoints.lua reads
        // with `nulls = true`): such a key gets the grace too. Only a key expiring sooner keeps its ttl.
        const ttl = credential.ttl !== null && credential.ttl <= graceSeconds ? {} : { ttl: graceSeconds };
        const until = 'ttl' in ttl ? nowSeconds + graceSeconds : (taggedExpiry(credential) ?? nowSeconds + credential.ttl!);
        previousKeysUntil = Math.max(previousKeysUntil ?? until, until);
        // a new ttl makes the expires-at tag wrong: Kong counts it from the PATCH (get_ttl_value;
        // to the second in hybrid mode); the key's time left is all there is then
        const kept = 'ttl' in ttl ? withoutExpiresAt(credential.tags) : credential.tags;
        const marked = isReplaced(credential) ? kept : [...kept, REPLACED_TAG];
        // (no tag holds a ',': Kong's validate_tag refuses it)
        const tags = marked.join(',') === credential.tags.join(',') ? {} : { tags: marked };
        if ('ttl' in ttl || 'tags' in tags) {
          onRollback(restoreKey(context, consumer.id, credential, 'ttl' in ttl));
          await admin.updateKey(consumer.id, credential.id, { ...ttl, ...tags }, 'setting the grace period of an old key');
        }
      }
      return {
        username,
        plan: summary.plan ?? 'free',
        ...newKey,
        consumerId: consumer.id,
        limits: summary.limits ?? limitsFor(context.catalogue, 'free'),
        graceSeconds,
        previousKeys: old.length,
        previousKeysUntil,
        previousKeysExpireFirst: previousKeysUntil !== null && previousKeysUntil < nowSeconds + graceSeconds,
      };
    });
  });
}

/**
 * The undo of an old key's grace period: its tags as read and, when the grace changed its ttl,
 * its expiry. Kong's ttl on a PATCH counts from the PATCH (postgres/init.lua:351-377 at 3.9.3,
 * get_ttl_value; 0: never expires), so the instant is given again as the seconds left until it:
 * its `expires-at:` tag's when it has one (restored with the tags), else the time left read with
 * it (up to a second early: Kong rounds it down).
 */
function restoreKey({ admin, now }: ProvisioningContext, consumerId: string, credential: KeyAuthCredential, ttlChanged: boolean): Undo {
  const instant = credential.ttl === null ? null : (taggedExpiry(credential) ?? Math.floor(now() / 1000) + credential.ttl);
  return () => {
    const ttl = !ttlChanged ? {} : { ttl: instant === null ? 0 : ttlUntil(instant, now()) };
    return admin.updateKey(consumerId, credential.id, { ...ttl, tags: credential.tags }, 'restoring an old key');
  };
}

/**
 * The undo of revoking an old key (a rotation without grace): the same credential again, id,
 * stored key, tags and time left, unless the DELETE never arrived and it is still there.
 */
async function restoreDeletedKey({ admin, now }: ProvisioningContext, consumerId: string, credential: KeyAuthCredential): Promise<void> {
  if ((await admin.keys(consumerId, 'checking an old key')).some((candidate) => candidate.id === credential.id)) return;
  const instant = credential.ttl === null ? null : (taggedExpiry(credential) ?? Math.floor(now() / 1000) + credential.ttl);
  const ttl = instant === null ? {} : { ttl: ttlUntil(instant, now()) };
  await admin.addKey(consumerId, { id: credential.id, key: credential.key, tags: credential.tags, ...ttl }, 'restoring an old key');
}

/**
 * Revokes the consumer's keys of that name at once (a rotated one still in its grace period
 * too), or without a name every key of the consumer; resolves with how many there were.
 */
export async function revokeKeys(context: ProvisioningContext, username: string, selector: { name?: string } = {}): Promise<number> {
  const consumer = await requireConsumer(context, username);
  let keys = await context.admin.keys(consumer.id);
  if (selector.name !== undefined) keys = keysNamed(username, keys, selector.name).keys;
  for (const credential of keys) await context.admin.deleteKey(consumer.id, credential.id, 'revoking a key');
  return keys.length;
}

/** The consumer's keys; none when it was deleted since the listing named it (Kong answers 404). */
async function keysUnlessGone({ admin }: ProvisioningContext, consumerId: string): Promise<KeyAuthCredential[]> {
  try {
    return await admin.keys(consumerId);
  } catch (error) {
    if (error instanceof ProvisioningError && error.status === 404) return [];
    throw error;
  }
}

/**
 * Keys of managed consumers that expire within `withinSeconds`, soonest first. A key rotate-key
 * replaced (in its grace period) is left out: its successor is what to look after.
 */
export async function expiringKeys(context: ProvisioningContext, withinSeconds: number): Promise<ExpiringKey[]> {
  const found: ExpiringKey[] = [];
  for await (const consumer of listConsumers(context)) {
    for (const credential of await keysUnlessGone(context, consumer.id)) {
      if (!isReplaced(credential) && credential.ttl !== null && credential.ttl <= withinSeconds) {
        found.push({ username: consumer.username, consumerId: consumer.id, key: summarizeKey(credential, context.now()) });
      }
    }
  }
  return found.sort((a, b) => (a.key.expiresInSeconds ?? 0) - (b.key.expiresInSeconds ?? 0));
}

/**
 * Replaces every plaintext credential of every managed consumer with one holding its digest,
 * the same tags plus KEY_HASH_TAG and the same time left. Per credential all-or-nothing: the
 * hashed one is created before the plaintext one is deleted, and removed again if that fails.
 * Idempotent: hashed credentials are left alone, and a run cut short between the two steps is
 * finished (the hashed twin is found, only the plaintext one is deleted).
 */
export async function hashKeys(
  context: ProvisioningContext,
  options: { dryRun: boolean },
  progress: (line: string) => void,
): Promise<HashKeysResult> {
  const result: HashKeysResult = { dryRun: options.dryRun, consumers: 0, hashed: 0, alreadyHashed: 0 };
  for await (const consumer of listConsumers(context)) {
    result.consumers += 1;
    // a consumer made before the ACL group existed joins it here (docs/shared-kong.md)
    if (!options.dryRun && !(await inGroup(context.admin, consumer.id))) await joinGroup(context.admin, consumer.id);
    const credentials = await context.admin.keys(consumer.id);
    for (const credential of credentials) {
      if (isHashedCredential(credential)) {
        result.alreadyHashed += 1;
        continue;
      }
      const where = `key ${credential.id} of ${consumer.username}`;
      if (!options.dryRun) await hashCredential(context, consumer.id, credential, credentials, where);
      result.hashed += 1;
      progress(`${options.dryRun ? 'would hash' : 'hashed'} ${where} (#${result.hashed})`);
    }
  }
  return result;
}

async function hashCredential(
  { admin }: ProvisioningContext,
  consumerId: string,
  plaintext: KeyAuthCredential,
  siblings: KeyAuthCredential[],
  where: string,
): Promise<void> {
  const stored = storedCredential(plaintext.key, plaintext.tags);
  const twin = siblings.find((credential) => isHashedCredential(credential) && credential.key === stored.key);
  await withRollback(async (onRollback) => {
    if (!twin) {
      // Kong reads a ttl as whole seconds left, 0 in the last second; a ttl of 0 would mean
      // "never expires", so the hashed key gets at least 1.
      const ttl = plaintext.ttl !== null ? { ttl: Math.max(1, plaintext.ttl) } : {};
      const created = await admin.addKey(consumerId, { ...stored, ...ttl }, `hashing ${where}`);
      onRollback(() => admin.deleteKey(consumerId, created.id, `removing the hashed copy of ${where}`));
    }
    await admin.deleteKey(consumerId, plaintext.id, `deleting the plaintext ${where}`);
  });
}
