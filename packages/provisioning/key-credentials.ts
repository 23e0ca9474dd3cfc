import type { AdminApi } from './admin-api/admin-api.ts';
import type { KeyAuthCredential } from './admin-api/entities.ts';
import { digestApiKey, generateApiKey, isHashedCredential, keyFingerprint, storedCredential } from './api-keys.ts';
import { joinGroup } from './consumer-group.ts';
import { CONSUMER_TAG } from './tags.ts';

/** A credential as `show` describes it: never its key, nor the digest Kong stores. */
export interface KeySummary {
  id: string;
  createdAt: number;
  expiresInSeconds: number | null;
  /** keyFingerprint (api-keys.ts): 8 hex, the same whether the key is stored hashed or not. */
  fingerprint: string;
  /** `sha256`: Kong holds the key's digest; `plaintext`: the key itself, until hash-keys runs. */
  stored: 'sha256' | 'plaintext';
}

export function summarizeKey(credential: KeyAuthCredential): KeySummary {
  const hashed = isHashedCredential(credential);
  return {
    id: credential.id,
    createdAt: credential.created_at,
    expiresInSeconds: credential.ttl,
    fingerprint: keyFingerprint(hashed ? credential.key : digestApiKey(credential.key)),
    stored: hashed ? 'sha256' : 'plaintext',
  };
}

/** A new key for the consumer: Kong receives its digest, the caller gets the key to hand out once. */
export async function issueKey(
  admin: AdminApi,
  consumerId: string,
  what: string,
): Promise<{ key: string; fingerprint: string; credential: KeyAuthCredential }> {
  // the group first: should the key fail, membership alone lets no one in
  await joinGroup(admin, consumerId);
  const key = generateApiKey();
  const stored = storedCredential(key, [CONSUMER_TAG]);
  const credential = await admin.addKey(consumerId, stored, what);
  return { key, fingerprint: keyFingerprint(stored.key), credential };
}
