import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { codePoints } from './text.ts';

/**
 * NIST SP 800-63B (rev. 4) §3.1.1.2: the portal's password is the only factor, so at least 15
 * characters; at least 64 must be accepted (we take 128); no composition rules; every character,
 * spaces included, counted as a Unicode code point after NFKC normalisation.
 */
export const PASSWORD_MIN = 15;
export const PASSWORD_MAX = 128;
/** How much of a password field is read, in UTF-16 code units (the pages' maxlength too): NFKC may make several one. */
export const PASSWORD_FIELD_UNITS = PASSWORD_MAX * 4;

/** scrypt's cost parameters: they travel with each hash, so a stored hash is checked at its own. */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/** N = 2^15, r = 8, p = 1 (OWASP's minimum for scrypt): 32 MiB and ~60 ms a hash here. */
export const SCRYPT_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

const normalize = (password: string) => password.normalize('NFKC');

/** Why a new password is refused, or null. */
export function passwordProblem(password: string, email: string): string | null {
  const length = codePoints(normalize(password));
  if (length < PASSWORD_MIN) return `The password needs at least ${PASSWORD_MIN} characters (it has ${length}).`;
  if (length > PASSWORD_MAX) return `The password can have at most ${PASSWORD_MAX} characters.`;
  if (normalize(password).toLowerCase() === email.toLowerCase()) return 'The password cannot be your email address.';
  if (new Set(normalize(password)).size === 1) return 'The password cannot be one character repeated.';
  return null;
}

function derive(password: string, salt: Buffer, params: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const options = { ...params, maxmem: 128 * 2 ** 20 };
    scrypt(normalize(password), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/**
 * Hashes new passwords at one cost (SCRYPT_COST unless told: tests give a cheaper one, as an
 * injected clock) and checks a stored hash at the cost it names.
 */
export class PasswordHasher {
  #unknownAccount: Promise<string> | undefined;

  constructor(private readonly cost: ScryptCost = SCRYPT_COST) {}

  /** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash, so they can be raised later. */
  async hash(password: string): Promise<string> {
    const { N, r, p } = this.cost;
    const salt = randomBytes(16);
    const key = await derive(password, salt, { N, r, p });
    return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const [scheme, n, r, p, salt, hash] = stored.split('$');
    if (scheme !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64url');
    const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
    return key.length === expected.length && timingSafeEqual(key, expected);
  }

  /** A hash no password matches, at this cost, verified when the email is unknown so that both cases take as long. */
  unknownAccountHash(): Promise<string> {
    return (this.#unknownAccount ??= this.hash(randomBytes(24).toString('base64url')));
  }
}
