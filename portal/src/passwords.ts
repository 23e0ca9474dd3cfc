import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * NIST SP 800-63B (rev. 4) §3.1.1.2: the portal's password is the only factor, so at least 15
 * characters; at least 64 must be accepted (we take 128); no composition rules; every character,
 * spaces included, counted as a Unicode code point after NFKC normalisation.
 */
export const PASSWORD_MIN = 15;
export const PASSWORD_MAX = 128;

/** scrypt with N = 2^15, r = 8, p = 1 (OWASP's minimum for scrypt): 32 MiB and ~60 ms a hash here. */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

const normalize = (password: string) => password.normalize('NFKC');

/** Why a new password is refused, or null. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...normalize(password)].length;
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

/** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let unknownAccount: Promise<string> | undefined;

/** A hash no password matches, verified when the email is unknown so that both cases take as long. */
export function unknownAccountHash(): Promise<string> {
  return (unknownAccount ??= hashPassword(randomBytes(24).toString('base64url')));
}
