import { randomBytes } from 'node:crypto';

/**
 * API keys: a fixed, recognisable prefix (so secret scanners can find leaked keys) and 256 bits
 * from the OS CSPRNG, base64url-encoded: `ask_` + 43 characters.
 */
export const API_KEY_PREFIX = 'ask_';
export const API_KEY_PATTERN = /^ask_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}
