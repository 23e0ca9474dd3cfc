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

export const EMAIL_MAX = 254;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * An address an account may take (a sign-up form's, an invitation's): one @ and a dot after it, no
 * spaces, no control or invisible format character, at most EMAIL_MAX characters.
 */
export const isAccountEmail = (email: string): boolean => EMAIL.test(email) && !hasControlOrFormat(email) && codePoints(email) <= EMAIL_MAX;

/** Emails compare case-insensitively: stored trimmed and lower-cased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

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
