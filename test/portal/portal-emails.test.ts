// Emails stored before they were normalised (NFKC, lower case): the portal's migration 004 brings
// them to the form sign-in looks up, and leaves two accounts that would become one as they are,
// saying which. The Admin API is a closed port: signing in needs none.
import { randomBytes, randomUUID, scryptSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { PortalBrowser, startTestPortal } from '../helpers/portal.ts';

const PASSWORD = 'correct horse battery staple';
const options = { adminUrl: 'http://127.0.0.1:9', apiUrl: 'http://127.0.0.1:9/v1', signUp: 'open' } as const;

/** A stored hash as passwords.ts writes one, at the tests' cost. */
function passwordHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFKC'), salt, 32, { N: 2 ** 10, r: 8, p: 1 });
  return ['scrypt', 2 ** 10, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

test.serial('migration 004 normalises stored emails, invitations and counters; two accounts that would become one are kept and named', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'portal-emails-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const account = (email: string) => ({ id: randomUUID(), email, name: 'N', password_hash: passwordHash(PASSWORD), consumer: null, created_at: Date.now() });
  const zoe = account('zoe\u0308@example.org'); // decomposed ë
  const info = account('info@example.org');
  const wide = account('\uff49\uff4e\uff46\uff4f@example.org'); // fullwidth "info"
  const before = await startTestPortal({ ...options, dataDir });
  try {
    await before.db('accounts').insert([zoe, info, wide]);
    await before.db('invites').insert({ token_hash: 'a'.repeat(64), email: '\uff44ana@example.com', expires_at: Date.now() + 3600_000, used_at: null });
    await before.db('signin_failures').insert({ scope: 'account', subject: zoe.email, failures: 3, delay_ms: 0, blocked_until: 0, last_failure: Date.now() });
    // as a store written before migration 004
    await before.db('portal_migrations').where({ name: '004_normalized_emails' }).delete();
  } finally {
    await before.dispose();
  }

  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args.join(' '));
  let after;
  try {
    after = await startTestPortal({ ...options, dataDir });
  } finally {
    console.warn = warn;
  }
  t.teardown(() => after.dispose());
  const emails = Object.fromEntries((await after.db('accounts').select('id', 'email')).map((row: { id: string; email: string }) => [row.id, row.email]));
  t.is(emails[zoe.id], 'zo\u00eb@example.org');
  t.is(emails[info.id], info.email, 'kept');
  t.is(emails[wide.id], wide.email, 'kept, not merged');
  t.is(warnings.length, 1);
  t.regex(warnings[0]!, new RegExp(`migration 004: accounts (${info.id}, ${wide.id}|${wide.id}, ${info.id}) have emails that are one address`));
  t.is((await after.db('invites').first('email')).email, 'dana@example.com');
  t.is((await after.db('signin_failures').where({ scope: 'account' }).first('subject')).subject, 'zo\u00eb@example.org');

  const b = new PortalBrowser(after.url, '198.51.100.7');
  await b.get('/portal/signin');
  t.is((await b.post('/portal/signin', { email: 'ZOE\u0308@example.org', password: PASSWORD })).status, 303, 'typed decomposed and in capitals');
});
