import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import test from 'ava';
import {
  API_KEY_LENGTH,
  API_KEY_PATTERN,
  KEY_HASH_TAG,
  classifyApiKey,
  digestApiKey,
  generateApiKey,
  isHashedCredential,
  keyFingerprint,
  storedCredential,
  type ApiKeyClass,
} from '../../packages/provisioning/index.ts';

// The key format and its test vectors (test/fixtures/api-key-vectors.json), which the edge
// plugin's tests read as well: what this file checks of them holds for both sides.

interface Vectors {
  format: { prefix: string; length: number; alphabet: string; random_chars: number; checksum_chars: number; legacy_length: number };
  hashed_credential_tag: string;
  fingerprint_label: string;
  vectors: Array<{ token: string; class: ApiKeyClass; why: string; checksum?: string; digest?: string; fingerprint?: string }>;
}
const VECTORS = JSON.parse(readFileSync(new URL('../fixtures/api-key-vectors.json', import.meta.url), 'utf8')) as Vectors;
const { alphabet: ALPHABET } = VECTORS.format;

/** CRC-32 (IEEE 802.3, reflected 0xEDB88320), bit by bit: a reference apart from zlib's. */
function referenceCrc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'latin1')) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

const referenceChecksum = (body: string) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(referenceCrc32(body));
  return bytes.toString('base64url');
};
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

test('a generated key: ask_, 256 random bits, a checksum over the 47 characters before it', (t) => {
  const keys = Array.from({ length: 200 }, generateApiKey);
  t.is(new Set(keys).size, keys.length);
  for (const key of keys) {
    t.is(key.length, API_KEY_LENGTH);
    t.is(API_KEY_LENGTH, VECTORS.format.length);
    t.regex(key, API_KEY_PATTERN);
    t.true(key.startsWith(VECTORS.format.prefix));
    t.is(Buffer.from(key.slice(4, 47), 'base64url').length, 32, 'the random part is 32 bytes');
    t.is(key.slice(47), referenceChecksum(key.slice(0, 47)));
    t.regex(key.slice(-1), /^[AQgw]$/, 'the last character carries 2 bits of the CRC and 4 zero bits');
    t.is(classifyApiKey(key), 'checksummed');
  }
});

test('every vector is of its class, with the checksum, digest and fingerprint it states', (t) => {
  t.is(VECTORS.hashed_credential_tag, KEY_HASH_TAG);
  t.true(VECTORS.vectors.length >= 30);
  for (const vector of VECTORS.vectors) {
    t.is(classifyApiKey(vector.token), vector.class, `${vector.token}: ${vector.why}`);
    if (vector.class === 'checksummed') t.is(vector.checksum, referenceChecksum(vector.token.slice(0, 47)), vector.why);
    if (vector.class === 'malformed') {
      t.is(vector.digest, undefined, 'a malformed token is never hashed');
      continue;
    }
    const digest = sha256(vector.token);
    t.is(vector.digest, digest, vector.why);
    t.is(digestApiKey(vector.token), digest);
    t.is(vector.fingerprint, sha256(VECTORS.fingerprint_label + digest).slice(0, 8));
    t.is(vector.fingerprint, keyFingerprint(digest));
  }
  const classes = new Set(VECTORS.vectors.map((v) => v.class));
  t.deepEqual([...classes].sort(), ['checksummed', 'legacy', 'malformed', 'unprefixed']);
});

test('every one-character change of a key is caught, and none of them passes for valid', (t) => {
  const key = generateApiKey();
  let changes = 0;
  for (let i = 0; i < key.length; i += 1) {
    for (const c of `${ALPHABET}+/=. `) {
      if (c === key[i]) continue;
      const changed = key.slice(0, i) + c + key.slice(i + 1);
      // A change inside the prefix makes an unprefixed token: it is hashed and looked up like a
      // hand-made key, and matches nothing.
      t.is(classifyApiKey(changed), i < 4 ? 'unprefixed' : 'malformed', changed);
      changes += 1;
    }
  }
  t.is(changes, 53 * 68);
});

test("an ask_ key never has a digest's shape, so a digest is never mistaken for a key", (t) => {
  t.notRegex(generateApiKey(), /^[0-9a-f]{64}$/);
  t.regex(digestApiKey(generateApiKey()), /^[0-9a-f]{64}$/);
});

test('storedCredential: the digest and the hashed tag, once, whatever tags it is given', (t) => {
  const key = generateApiKey();
  t.deepEqual(storedCredential(key, ['petstore-consumer']), { key: sha256(key), tags: ['petstore-consumer', 'key-hash:sha256'] });
  t.deepEqual(storedCredential(key, ['key-hash:sha256', 'x']).tags, ['x', 'key-hash:sha256']);
  t.true(isHashedCredential(storedCredential(key, [])));
  t.false(isHashedCredential({ tags: null }));
  t.false(isHashedCredential({ tags: ['petstore-consumer'] }));
});
