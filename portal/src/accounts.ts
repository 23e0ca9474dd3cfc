import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { codePoints, hasControlOrFormat } from './text.ts';

export interface Account {
  id: string;
  email: string;
  name: string;
  /** The Kong consumer's username, null until the gateway made it. */
  consumer: string | null;
  createdAt: number;
}

export interface AccountRow {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  consumer: string | null;
  created_at: number;
}

export const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  email: row.email,
  name: row.name,
  consumer: row.consumer,
  createdAt: Number(row.created_at),
});

const EMAIL_MAX = 254;
/** How much of an email field is read, in UTF-16 code units (the pages' maxlength too): a character may be two. */
export const EMAIL_FIELD_UNITS = EMAIL_MAX * 2;
/** A name's length, in code points. */
export const NAME_MAX = 100;
export const NAME_FIELD_UNITS = NAME_MAX * 2;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** A letter that shows a dot (i, j, į…) with U+0307 COMBINING DOT ABOVE: it looks like the letter alone ("İnfo" lower-cased). */
const DOUBLE_DOT = /\p{Soft_Dotted}\u0307/u;

/**
 * The form an email is stored, looked up and counted in: trimmed, NFKC (a composed and a decomposed
 * "ë" are one letter, a fullwidth "ｉ" is "i", as IDNA maps a domain), and lower-cased (NFKC again
 * after it, as lower-casing can undo it). So two addresses that look the same are one address.
 */
export const normalizeEmail = (email: string) => email.trim().normalize('NFKC').toLowerCase().normalize('NFKC');

/**
 * An address an account may take (a sign-up form's, an invitation's), once normalised: one @ and a
 * dot after it, no spaces, no control or invisible format character, no dot above a letter that has
 * one already, at most EMAIL_MAX characters.
 */
export function isAccountEmail(email: string): boolean {
  const normalized = normalizeEmail(email);
  return EMAIL.test(normalized) && !hasControlOrFormat(normalized) && !DOUBLE_DOT.test(normalized) && codePoints(normalized) <= EMAIL_MAX;
}

export class EmailTaken extends Error {}

/** A unique constraint refused the row: SQLite's SQLITE_CONSTRAINT (UNIQUE), PostgreSQL's 23505. */
const isUniqueViolation = (error: unknown) =>
  (error as { code?: string }).code === '23505' || /UNIQUE constraint failed/.test((error as Error).message);

export class AccountStore {
  constructor(private readonly db: Knex) {}

  /** Throws EmailTaken when the address has an account. */
  async create(input: { email: string; name: string; passwordHash: string; now: number }): Promise<Account> {
    const row: AccountRow = {
      id: randomUUID(),
      email: normalizeEmail(input.email),
      name: input.name,
      password_hash: input.passwordHash,
      consumer: null,
      created_at: input.now,
    };
    try {
      await this.db<AccountRow>('accounts').insert(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw new EmailTaken(row.email);
      throw error;
    }
    return toAccount(row);
  }

  /** The account and its password hash, for signing in. */
  async findForSignIn(email: string): Promise<{ account: Account; passwordHash: string } | undefined> {
    const row = await this.db<AccountRow>('accounts').where({ email: normalizeEmail(email) }).first();
    return row && { account: toAccount(row), passwordHash: row.password_hash };
  }

  async linkConsumer(id: string, consumer: string): Promise<void> {
    await this.db<AccountRow>('accounts').where({ id }).update({ consumer });
  }

  async delete(id: string): Promise<void> {
    await this.db<AccountRow>('accounts').where({ id }).delete();
  }
}
