import type { Knex } from 'knex';
import { toAccount, type Account, type AccountRow } from './accounts.ts';
import { newToken, tokenHash } from './tokens.ts';

/** How long a session lasts from sign-in, whatever is done meanwhile (the cookie's Max-Age too). */
const SESSION_TTL_MS = 12 * 3600 * 1000;

interface SessionRow {
  id_hash: string;
  account_id: string;
  expires_at: number;
  notice: string | null;
}

type SessionAccountRow = AccountRow & { session_expires_at: number | string };

/** Server-side sessions: the cookie holds an opaque id, the table only its hash. */
export class SessionStore {
  constructor(private readonly db: Knex) {}

  /** A new session; resolves with the id for the cookie, which is never stored. */
  async create(accountId: string, now: number): Promise<{ id: string; expiresAt: number }> {
    const id = newToken();
    const expiresAt = now + SESSION_TTL_MS;
    await this.db<SessionRow>('sessions').insert({ id_hash: tokenHash(id), account_id: accountId, expires_at: expiresAt, notice: null });
    return { id, expiresAt };
  }

  /**
   * The account of a live session, or undefined (unknown or expired: an expired one is deleted).
   * One query with its account: it is every signed-in page's first read.
   */
  async accountOf(id: string, now: number): Promise<Account | undefined> {
    const row: SessionAccountRow | undefined = await this.db('sessions')
      .join('accounts', 'accounts.id', 'sessions.account_id')
      .where('sessions.id_hash', tokenHash(id))
      .first<SessionAccountRow | undefined>('accounts.*', 'sessions.expires_at as session_expires_at');
    if (!row) return undefined;
    if (Number(row.session_expires_at) <= now) {
      await this.end(id);
      return undefined;
    }
    return toAccount(row);
  }

  /** What the session's next page says (the outcome of a POST it redirects after); replaces any earlier notice. */
  async setNotice(id: string, notice: string): Promise<void> {
    await this.db<SessionRow>('sessions').where({ id_hash: tokenHash(id) }).update({ notice });
  }

  /** The session's notice, if any, cleared: a page shows it once. */
  async takeNotice(id: string): Promise<string | undefined> {
    const row = await this.db<SessionRow>('sessions').where({ id_hash: tokenHash(id) }).first('notice');
    if (!row?.notice) return undefined;
    await this.db<SessionRow>('sessions').where({ id_hash: tokenHash(id), notice: row.notice }).update({ notice: null });
    return row.notice;
  }

  async end(id: string): Promise<void> {
    await this.db<SessionRow>('sessions').where({ id_hash: tokenHash(id) }).delete();
  }

  async purgeExpired(now: number): Promise<number> {
    return this.db<SessionRow>('sessions').where('expires_at', '<=', now).delete();
  }
}
