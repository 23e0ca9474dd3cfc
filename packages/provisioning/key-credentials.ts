import { randomUUID } from 'node:crypto';
import type { AdminApi, NewCredential } from './admin-api/admin-api.ts';
import type { KeyAuthCredential } from './admin-api/entities.ts';
import { digestApiKey, generateApiKey, isHashedCredential, keyFingerprint, storedCredential } from './api-keys.ts';
import { joinGroup } from './consumer-group.ts';
import { ProvisioningError } from './errors.ts';
import { KEY_NAME_PATTERN, SCOPES, isReplaced, isScope, keyNameOf, keyTags, scopesOf, taggedExpiry, type Scope } from './key-tags.ts';
import { unlessGone, type Undo } from './rollback.ts';
import { CONSUMER_TAG } from './tags.ts';

/** Kong's longest ttl (kong/constants.lua DAO_MAX_TTL, 3.9.3): about 3 years 2 months. */
export const MAX_KEY_TTL_SECONDS = 100_000_000;

/** A credential as `show` describes it: never its key, nor the digest Kong stores. */
export interface KeySummary {
  id: string;
  /** Its `name:` tag; `default` for a key made before keys had names. */
  name: string;
  /** rotate-key replaced it: it lives out its grace period, its successor has its name. */
  replaced: boolean;
  /** What it may do (key-tags.ts); empty: everything. */
  scopes: Scope[];
  createdAt: number;
  /** Seconds left before Kong stops accepting it (its ttl); null: it never expires. */
  expiresInSeconds: number | null;
  /** When that is, unix seconds; null: never. */
  expiresAt: number | null;
  /** keyFingerprint (api-keys.ts): 8 hex, the same whether the key is stored hashed or not. */
  fingerprint: string;
  /** `sha256`: Kong holds the key's digest; `plaintext`: the key itself, until hash-keys runs. */
  stored: 'sha256' | 'plaintext';
}

export function summarizeKey(credential: KeyAuthCredential, nowMs: number): KeySummary {
  const hashed = isHashedCredential(credential);
  return {
    id: credential.id,
    name: keyNameOf(credential),
    replaced: isReplaced(credential),
    scopes: scopesOf(credential),
    createdAt: credential.created_at,
    expiresInSeconds: credential.ttl,
    // Kong's time left is rounded down: now + ttl can be up to a second early. A key made before
    // the expires-at tag, or given a grace period since, has only that to go by.
    expiresAt: credential.ttl === null ? null : (taggedExpiry(credential) ?? Math.floor(nowMs / 1000) + credential.ttl),
    fingerprint: keyFingerprint(hashed ? credential.key : digestApiKey(credential.key)),
    stored: hashed ? 'sha256' : 'plaintext',
  };
}

/** When a key stops working: give one of the two, or neither for a key that never expires. */
export interface KeyExpiry {
  /** Seconds from now, a whole number from 1 to MAX_KEY_TTL_SECONDS. */
  expiresInSeconds?: number;
  /** An instant in the future, at most MAX_KEY_TTL_SECONDS away. */
  expiresAt?: Date;
}

/** A new key's properties: its name (unique per consumer), scopes (none: everything) and expiry. */
export interface KeyOptions extends KeyExpiry {
  name: string;
  scopes?: readonly string[];
}

const invalid = (message: string) => new ProvisioningError('key-options', message);

/** The scopes as given, checked and in SCOPES order, duplicates dropped. */
export function checkedScopes(scopes: readonly string[]): Scope[] {
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) throw invalid(`unknown scope ${JSON.stringify(unknown[0])}: use ${SCOPES.join(', ')}`);
  return SCOPES.filter((scope) => scopes.includes(scope));
}

export function checkedName(name: string): string {
  if (!KEY_NAME_PATTERN.test(name)) {
    throw invalid(`key name ${JSON.stringify(name)}: use 1 to 40 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit`);
  }
  return name;
}

/** The instant a new key expires at, for `expiry` (undefined: never); a bad expiry is `key-options`. */
export function expiryInstant(expiry: KeyExpiry, nowMs: number): number | undefined {
  const { expiresInSeconds, expiresAt } = expiry;
  if (expiresInSeconds !== undefined && expiresAt !== undefined) throw invalid('give an expiry in seconds or an instant, not both');
  let instant: number | undefined;
  if (expiresInSeconds !== undefined) {
    if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1) throw invalid('a key must live at least 1 second (a whole number)');
    instant = Math.floor(nowMs / 1000) + expiresInSeconds;
  } else if (expiresAt !== undefined) {
    if (Number.isNaN(expiresAt.getTime())) throw invalid('the expiry instant is not a valid date');
    if (expiresAt.getTime() <= nowMs) throw invalid(`the expiry ${expiresAt.toISOString()} is not in the future`);
    // Kong keeps whole seconds: round up, so that the key lives at least until the instant
    instant = Math.ceil(expiresAt.getTime() / 1000);
  }
  if (instant !== undefined && ttlUntil(instant, nowMs) > MAX_KEY_TTL_SECONDS) {
    throw invalid(`a key can live at most ${MAX_KEY_TTL_SECONDS} seconds (about 3 years; Kong's longest ttl)`);
  }
  return instant;
}

/**
 * The ttl that makes a key created now expire at `instant`: Kong counts it from the credential's
 * created_at, whole seconds of its clock (kong/db/strategies/postgres/init.lua:351-377,
 * get_ttl_value; created_at is an auto_timestamp_s). At least 1: a ttl of 0 would mean "never".
 */
export const ttlUntil = (instant: number, nowMs: number) => Math.max(1, instant - Math.floor(nowMs / 1000));

/** What a new credential holds besides its key: its tags and expiry instant, all checked. */
export interface KeySpec {
  name: string;
  scopes: Scope[];
  /** Unix seconds; none (nor expiresInSeconds): it never expires. */
  expiresAt?: number;
  /** A lifetime counted from the insert, whose instant the insert fixes: exactly this ttl for Kong. */
  expiresInSeconds?: number;
}

export function keySpec(options: KeyOptions, nowMs: number): KeySpec {
  const expiresAt = expiryInstant(options, nowMs);
  const spec: KeySpec = { name: checkedName(options.name), scopes: checkedScopes(options.scopes ?? []) };
  if (options.expiresInSeconds !== undefined) return { ...spec, expiresInSeconds: options.expiresInSeconds };
  return expiresAt === undefined ? spec : { ...spec, expiresAt };
}

/** A new key as the caller hands it out: the key itself is here once. */
export interface NewKey {
  key: string;
  fingerprint: string;
  name: string;
  scopes: Scope[];
  /** Unix seconds; null: never. */
  expiresAt: number | null;
}

/**
 * A new key for the consumer: Kong receives its digest, the caller gets the key to hand out once.
 * With `onRollback`, its removal is registered before it is sent (rollback.ts, unlessGone).
 */
export async function issueKey(
  admin: AdminApi,
  consumerId: string,
  spec: KeySpec,
  now: () => number,
  what: string,
  onRollback?: (undo: Undo) => void,
): Promise<{ newKey: NewKey; credential: KeyAuthCredential }> {
  // the group first: should the key fail, membership alone lets no one in
  await joinGroup(admin, consumerId);
  const key = generateApiKey();
  // the ttl from the instant, reckoned just before the insert: Kong counts it from the insert; a
  // lifetime (`--expires-in 2h`) fixes its instant here, so that Kong's ttl is that lifetime
  const nowMs = now();
  const instant = spec.expiresInSeconds !== undefined ? Math.floor(nowMs / 1000) + spec.expiresInSeconds : spec.expiresAt;
  const id = randomUUID();
  const stored: NewCredential = { id, ...storedCredential(key, [CONSUMER_TAG, ...keyTags(spec.name, spec.scopes, instant)]) };
  if (instant !== undefined) stored.ttl = ttlUntil(instant, nowMs);
  onRollback?.(unlessGone(() => admin.deleteKey(consumerId, id, 'removing the new key')));
  const credential = await admin.addKey(consumerId, stored, what);
  const expiresAt = instant ?? null;
  return { newKey: { key, fingerprint: keyFingerprint(stored.key), name: spec.name, scopes: spec.scopes, expiresAt }, credential };
}
