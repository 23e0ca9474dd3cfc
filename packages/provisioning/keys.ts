import type { KeyAuthCredential } from './admin-api/entities.ts';
import { isHashedCredential, storedCredential } from './api-keys.ts';
import { listConsumers, requireConsumer, summarizeConsumer, type IssuedKey } from './consumers.ts';
import type { ProvisioningContext } from './context.ts';
import { inGroup, joinGroup } from './consumer-group.ts';
import { issueKey } from './key-credentials.ts';
import { limitsFor } from './plans.ts';
import { withRollback } from './rollback.ts';

const DEFAULT_GRACE_SECONDS = 24 * 3600;

export interface RotatedKey extends IssuedKey {
  graceSeconds: number;
  previousKeys: number;
}

/** What `hashKeys` did, or with `dryRun` would do. */
export interface HashKeysResult {
  dryRun: boolean;
  consumers: number;
  hashed: number;
  alreadyHashed: number;
}

/**
 * A new key now; the old ones keep working for `graceSeconds` through the credential ttl, so
 * clients can switch without downtime. A grace of 0 revokes them at once.
 */
export async function rotateKey(context: ProvisioningContext, username: string, graceSeconds = DEFAULT_GRACE_SECONDS): Promise<RotatedKey> {
  const { admin } = context;
  const consumer = await requireConsumer(context, username);
  const summary = await summarizeConsumer(context, consumer);
  const old = await admin.keys(consumer.id);
  return withRollback(async (onRollback) => {
    const { key, fingerprint, credential: created } = await issueKey(admin, consumer.id, 'creating the new key');
    onRollback(() => admin.deleteKey(consumer.id, created.id, 'removing the new key'));
    for (const credential of old) {
      if (graceSeconds === 0) {
        await admin.deleteKey(consumer.id, credential.id, 'revoking an old key');
        continue;
      }
      // Kong answers `"ttl": null` for a key that never expires (kong/api/endpoints.lua reads
      // with `nulls = true`): such a key gets the grace too. Only a key expiring sooner is kept.
      if (credential.ttl !== null && credential.ttl <= graceSeconds) continue;
      await admin.setKeyTtl(consumer.id, credential.id, graceSeconds, 'setting the grace period of an old key');
    }
    return {
      username,
      plan: summary.plan ?? 'free',
      key,
      fingerprint,
      consumerId: consumer.id,
      limits: summary.limits ?? limitsFor(context.catalogue, 'free'),
      graceSeconds,
      previousKeys: old.length,
    };
  });
}

/** Revokes every key of the consumer at once; resolves with how many there were. */
export async function revokeKeys(context: ProvisioningContext, username: string): Promise<number> {
  const consumer = await requireConsumer(context, username);
  const keys = await context.admin.keys(consumer.id);
  for (const credential of keys) await context.admin.deleteKey(consumer.id, credential.id, 'revoking a key');
  return keys.length;
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
