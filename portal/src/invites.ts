import type { Knex } from 'knex';
import { normalizeEmail } from './accounts.ts';
import { newToken, tokenHash } from './tokens.ts';

/** How long an invitation link works. */
const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;

interface InviteRow {
  token_hash: string;
  email: string;
  expires_at: number;
  used_at: number | null;
}

/** One-time invitation tokens: the store keeps each token's hash; a token signs up one account. */
export class InviteStore {
  constructor(private readonly db: Knex) {}

  async create(email: string, now: number): Promise<{ token: string; email: string; expiresAt: number }> {
    const token = newToken();
    const row: InviteRow = { token_hash: tokenHash(token), email: normalizeEmail(email), expires_at: now + INVITE_TTL_MS, used_at: null };
    await this.db<InviteRow>('invites').insert(row);
    return { token, email: row.email, expiresAt: row.expires_at };
  }

  /** The email an unused, unexpired token invites, or undefined. */
  async emailOf(token: string, now: number): Promise<string | undefined> {
    const row = await this.db<InviteRow>('invites').where({ token_hash: tokenHash(token) }).first();
    if (!row || row.used_at !== null || Number(row.expires_at) <= now) return undefined;
    return row.email;
  }

  /** Marks the token used; false if it was used or expired meanwhile (the check and the write are one statement). */
  async use(token: string, now: number): Promise<boolean> {
    const updated = await this.db<InviteRow>('invites')
      .where({ token_hash: tokenHash(token), used_at: null })
      .andWhere('expires_at', '>', now)
      .update({ used_at: now });
    return updated === 1;
  }

  /** Deletes the invitations past their expiry, used or not: they open nothing any more. */
  async purgeExpired(now: number): Promise<number> {
    return this.db<InviteRow>('invites').where('expires_at', '<=', now).delete();
  }

  /** Makes a used token usable again: the sign-up it was spent on failed after the fact. */
  async release(token: string): Promise<void> {
    await this.db<InviteRow>('invites').where({ token_hash: tokenHash(token) }).update({ used_at: null });
  }
}
