import { isAccountEmail } from './accounts.ts';
import { readStoreSettings } from './config.ts';
import { openExistingPortalDatabase } from './db/connect.ts';
import { InviteStore } from './invites.ts';
import { BASE } from './paths.ts';

/**
 * A one-time sign-up link for `email`, written to the portal's store (PORTAL_DATA_DIR, or
 * PORTAL_DATABASE_URL), which must exist: what `npm run consumers -- invite <email>` prints. The
 * store keeps only the token's hash.
 */
export async function inviteByEmail(
  email: string,
  env: NodeJS.ProcessEnv,
  now = Date.now(),
): Promise<{ link: string; email: string; expiresAt: Date }> {
  // the sign-up form checks the invited address again: one it refuses would open nothing
  if (!isAccountEmail(email)) throw new Error(`${JSON.stringify(email)} is not an address an account can take`);
  const config = readStoreSettings(env);
  const db = await openExistingPortalDatabase(config);
  try {
    const invite = await new InviteStore(db).create(email, now);
    return { link: `${config.publicUrl}${BASE}/signup?invite=${invite.token}`, email: invite.email, expiresAt: new Date(invite.expiresAt) };
  } finally {
    await db.destroy();
  }
}
