import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API keys (docs/api-keys.md; test vectors in test/fixtures/api-key-vectors.json):
 *
 *   ask_ <43 random> <6 checksum>          53 characters, all of [A-Za-z0-9_-] after the prefix
 *
 * - `ask_`: a fixed prefix, so secret scanners can find leaked keys.
 * - random: 32 bytes (256 bits) from the OS CSPRNG, base64url without padding (43 characters).
 * - checksum: CRC-32 (IEEE 802.3, as zlib and nginx's ngx_crc32_long compute it) of the 47
 *   characters before it, as 4 bytes big-endian, base64url without padding (6 characters, the
 *   last always one of A, Q, g, w). Same alphabet as the random part, fixed width, no arithmetic
 *   to encode it: `ngx.crc32_long` + `ngx.encode_base64(bytes, true)` on the gateway side.
 *
 * The checksum is not a secret and proves nothing about who made a key: it lets the gateway refuse
 * a mistyped or made-up token before any lookup, and a scanner tell a real key from a random string.
 */
const API_KEY_PREFIX = 'ask_';
const RANDOM_BYTES = 32;
const RANDOM_CHARS = 43;
const CHECKSUM_CHARS = 6;
export const API_KEY_LENGTH = API_KEY_PREFIX.length + RANDOM_CHARS + CHECKSUM_CHARS;
/** The shape of a key; `classifyApiKey` also checks its checksum. */
export const API_KEY_PATTERN = /^ask_[A-Za-z0-9_-]{49}$/;
/** Keys issued before the checksum: `ask_` + 43 random characters. */
const LEGACY_API_KEY_PATTERN = /^ask_[A-Za-z0-9_-]{43}$/;

/** The checksum of the characters before it: the last 6 characters of a key. */
function apiKeyChecksum(body: string): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc32(body));
  return bytes.toString('base64url');
}

export function generateApiKey(): string {
  const body = API_KEY_PREFIX + randomBytes(RANDOM_BYTES).toString('base64url');
  return body + apiKeyChecksum(body);
}

/**
 * What a bearer token is, for the gateway's check before any lookup:
 * - `checksummed`: a key of this format with a correct checksum: hash it and look it up;
 * - `legacy`: `ask_` + 43 characters, issued before the checksum: hash it and look it up;
 * - `malformed`: any other token starting with `ask_` (wrong length, character or checksum):
 *   refused (401 invalid_api_key) before any hash or lookup;
 * - `unprefixed`: not starting with `ask_`, e.g. a key an admin made by hand: hash it and look it up.
 */
export type ApiKeyClass = 'checksummed' | 'legacy' | 'malformed' | 'unprefixed';

export function classifyApiKey(token: string): ApiKeyClass {
  if (!token.startsWith(API_KEY_PREFIX)) return 'unprefixed';
  if (LEGACY_API_KEY_PATTERN.test(token)) return 'legacy';
  if (!API_KEY_PATTERN.test(token)) return 'malformed';
  const body = token.slice(0, -CHECKSUM_CHARS);
  return token.slice(-CHECKSUM_CHARS) === apiKeyChecksum(body) ? 'checksummed' : 'malformed';
}

/**
 * The tag on a credential whose `key` is the digest of the API key, not the key. A tag rather
 * than the digest's shape (64 lowercase hex) because a key made by hand with `openssl rand -hex 32`
 * has that shape too: it would pass for hashed, never be migrated, and never authenticate once
 * the gateway hashes tokens. The tag names the algorithm, so another one would get its own.
 */
export const KEY_HASH_TAG = 'key-hash:sha256';

/** Lowercase hex SHA-256 of exactly the key's characters (UTF-8): what Kong stores as `key`. */
export function digestApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * The one place that decides what Kong stores for a new key: its digest, tagged as hashed.
 * `create`, `rotate-key` and `hash-keys` all build their credential here.
 */
export function storedCredential(key: string, tags: readonly string[]): { key: string; tags: string[] } {
  return { key: digestApiKey(key), tags: [...tags.filter((tag) => tag !== KEY_HASH_TAG), KEY_HASH_TAG] };
}

export function isHashedCredential(credential: { tags?: readonly string[] | null }): boolean {
  return (credential.tags ?? []).includes(KEY_HASH_TAG);
}

const FINGERPRINT_LABEL = 'ask-fingerprint:';

/**
 * A short, non-secret name for a key that `show` can print: the first 8 hex of SHA-256 over a
 * label and the key's digest. Computed from the digest because that is all Kong keeps; the label
 * makes it a different function from the digest, and 32 bits of it say nothing useful about the
 * 256-bit digest or key. Whoever holds the key can compute it (docs/api-keys.md) to tell which one it is.
 */
export function keyFingerprint(digest: string): string {
  return createHash('sha256').update(FINGERPRINT_LABEL + digest, 'utf8').digest('hex').slice(0, 8);
}
