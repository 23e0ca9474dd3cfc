import type { Knex } from 'knex';
import { newToken } from '../tokens.ts';

/**
 * The cookie secret every replica on one PostgreSQL store shares when PORTAL_COOKIE_SECRET is
 * unset: the first replica's insert wins, every other one reads it back.
 */
export async function sharedCookieSecret(db: Knex): Promise<string> {
  await db('settings').insert({ name: 'cookie_secret', value: newToken() }).onConflict('name').ignore();
  const row = (await db('settings').where({ name: 'cookie_secret' }).first()) as { value: string };
  return row.value;
}
