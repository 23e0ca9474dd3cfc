import type { KeyAuthCredential } from './admin-api/entities.ts';

/**
 * What a key may do, by resource and access (docs/api-keys.md, "Scopes"): the gateway's
 * animal-store-access plugin reads them from the credential's tags (scopes.lua there). A key
 * without any scope may do everything.
 */
export const SCOPES = ['pets:read', 'pets:write', 'orders:read', 'orders:write'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/**
 * A key's name: unique among a consumer's live keys (a rotated key's successor takes it over).
 * Lowercase letters, digits, `.`, `_` and `-`, at most 40: a subset of what Kong allows in a tag
 * (kong/db/schema/typedefs.lua validate_tag refuses `,` and `/`), and safe in a shell and a URL.
 */
export const KEY_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,39}$/;
/** The name create gives the consumer's first key unless told otherwise. */
export const DEFAULT_KEY_NAME = 'default';

const NAME_TAG = 'name:';
const SCOPE_TAG = 'scope:';
const EXPIRES_AT_TAG = 'expires-at:';

/** On a key rotate-key replaced: it works until its grace period ends, its successor has its name. */
export const REPLACED_TAG = 'replaced';
export const isReplaced = (credential: Pick<KeyAuthCredential, 'tags'>) => credential.tags.includes(REPLACED_TAG);

/**
 * The tags that carry a key's name, scopes and expiry instant (unix seconds, when it expires), in
 * the order the CLI writes them.
 */
export const keyTags = (name: string, scopes: readonly Scope[], expiresAt?: number) => [
  `${NAME_TAG}${name}`,
  ...scopes.map((scope) => `${SCOPE_TAG}${scope}`),
  ...(expiresAt !== undefined ? [`${EXPIRES_AT_TAG}${expiresAt}`] : []),
];

/**
 * The instant its `expires-at:` tag says the key expires (unix seconds); undefined for a key
 * without one (made before the tag, or given a grace period since). Kong keeps no more than the
 * time left, rounded down: the tag is what keeps the instant exact (key-credentials.ts).
 */
export function taggedExpiry(credential: Pick<KeyAuthCredential, 'tags'>): number | undefined {
  const tag = credential.tags.find((candidate) => candidate.startsWith(EXPIRES_AT_TAG));
  const digits = tag?.slice(EXPIRES_AT_TAG.length);
  return digits !== undefined && /^[0-9]{1,15}$/.test(digits) ? Number(digits) : undefined;
}

/** Its tags without the `expires-at:` tag: for a key whose ttl is set anew (a grace period). */
export const withoutExpiresAt = (tags: readonly string[]) => tags.filter((tag) => !tag.startsWith(EXPIRES_AT_TAG));

/** The name a credential's `name:` tag gives it; a key made before keys had names is the default one. */
export const keyNameOf = (credential: Pick<KeyAuthCredential, 'tags'>): string =>
  credential.tags.find((tag) => tag.startsWith(NAME_TAG))?.slice(NAME_TAG.length) ?? DEFAULT_KEY_NAME;

/** The scopes its `scope:` tags give it, in SCOPES order; empty: every scope. */
export const scopesOf = (credential: Pick<KeyAuthCredential, 'tags'>): Scope[] =>
  SCOPES.filter((scope) => credential.tags.includes(`${SCOPE_TAG}${scope}`));
