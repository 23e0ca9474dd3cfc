import { createHash, randomBytes } from 'node:crypto';

/** 256 random bits, base64url: session ids, invite tokens, CSRF tokens. */
export const newToken = () => randomBytes(32).toString('base64url');

/** What the store keeps of a token: its SHA-256 (a token has 256 bits, so no salt or slow hash is needed). */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
