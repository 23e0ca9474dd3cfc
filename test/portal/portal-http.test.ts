// The developer portal over HTTP (issue 32), against a real local gateway: sign-up makes a Kong
// consumer through the provisioning library and its key calls the API; CSRF, cookies, escaping,
// slowed sign-ins and one-time invitations.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runCliInProcess } from '../helpers/cli.ts';
import { ManualClock } from '../helpers/clock.ts';
import { PortalBrowser, shownKey, startTestPortal, type TestPortal } from '../helpers/portal.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';

const PASSWORD = 'correct horse battery staple';

let stack: TestStack;
let open: TestPortal;
let invited: TestPortal;
/** The invite-mode portal's clock: invitations from the CLI are dated by the real clock. */
const inviteClock = new ManualClock(Date.now());
let ips = 0;
// Tests that move the shared clock (session expiry, throttling waits, invitation expiry) run
// serially, before the others, so that no other test's session or counter moves with it.
/** A browser from a client address of its own, so that per-IP throttling never spans two tests. */
const browser = (portal: TestPortal) => new PortalBrowser(portal.url, `198.51.100.${++ips}`);

test.before(async () => {
  stack = await startStack();
  const common = { adminUrl: stack.gateway.adminUrl, apiUrl: `${stack.gateway.proxyUrl}/v1`, clock: stack.clock.now };
  open = await startTestPortal({ ...common, signUp: 'open', supportEmail: 'plans@animal.store' });
  invited = await startTestPortal({ ...common, signUp: 'invite', clock: inviteClock.now });
});

test.after.always(async () => {
  await open?.dispose();
  await invited?.dispose();
  await stack?.dispose();
});

async function signUp(b: PortalBrowser, email: string, name = 'Ada') {
  await b.get('/portal/signup');
  return b.post('/portal/signup', { email, name, password: PASSWORD });
}

test('sign-up makes a consumer on the free plan linked by custom_id, and shows a key once that calls the API', async (t) => {
  const b = browser(open);
  const page = await signUp(b, 'ada@example.com');
  t.is(page.status, 201);
  t.is(page.headers.get('cache-control'), 'no-store');
  const key = shownKey(page);
  t.truthy(key, 'the key is on the page');

  const pets = await stack.call('/v1/pets', { key });
  t.is(pets.status, 200);

  const entry = open.audit.map((line) => JSON.parse(line)).find((e) => e.action === 'sign-up' && e.ip === b.ip);
  t.regex(entry.fingerprint, /^[0-9a-f]{8}$/);
  t.false(open.audit.join('\n').includes(key!), 'no key in the audit log');
  const consumers = await stack.admin(`/consumers?tags=petstore-consumer`);
  const consumer = consumers.body.data.find((c: any) => c.custom_id === entry.account);
  t.truthy(consumer, 'a consumer whose custom_id is the account id');
  t.deepEqual([...consumer.tags].sort(), ['petstore-consumer', 'plan:free']);

  const dashboard = await b.get('/portal/');
  t.is(dashboard.status, 200);
  t.regex(dashboard.text, /Plan <strong>free<\/strong>: 60 requests a minute, 1000 a day/);
  t.true(dashboard.text.includes(entry.fingerprint), 'the key is listed by its fingerprint');
  t.false(dashboard.text.includes(key!), 'the dashboard never shows the key');
});

test.serial('session and CSRF cookies are signed, HttpOnly, Secure, SameSite, limited to /portal/, and the session expires', async (t) => {
  const b = browser(open);
  const page = await signUp(b, 'flags@example.com');
  const lines = page.headers.getSetCookie();
  const session = lines.find((line) => line.startsWith('portal_session='))!;
  t.truthy(session);
  t.regex(session, /; path=\/portal\//);
  t.regex(session, /; httponly/);
  t.regex(session, /; secure/);
  t.regex(session, /; samesite=lax/);
  t.regex(session, /; expires=/);
  t.truthy(lines.find((line) => line.startsWith('portal_session.sig=')), 'signed');
  const csrf = lines.find((line) => line.startsWith('portal_csrf='))!;
  t.regex(csrf, /; samesite=strict/);
  t.regex(csrf, /; httponly/);

  // a forged session id (its signature does not match) is no session
  const forged = browser(open);
  forged.cookies.set('portal_session', 'forged');
  forged.cookies.set('portal_session.sig', b.cookies.get('portal_session.sig')!);
  t.is((await forged.get('/portal/')).status, 302);

  t.is((await b.get('/portal/')).status, 200);
  await stack.clock.advance(12 * 3600 * 1000);
  const expired = await b.get('/portal/');
  t.is(expired.status, 302);
  t.is(expired.headers.get('location'), '/portal/signin');
});

test('a form without its CSRF token, or with another browser\'s, is refused and changes nothing', async (t) => {
  const b = browser(open);
  await b.get('/portal/signup');
  const without = await b.post('/portal/signup', { email: 'csrf@example.com', name: 'C', password: PASSWORD }, { csrf: false });
  t.is(without.status, 403);
  const other = browser(open);
  await other.get('/portal/signup');
  const mismatched = await b.post('/portal/signup', { _csrf: other.csrf, email: 'csrf@example.com', name: 'C', password: PASSWORD });
  t.is(mismatched.status, 403);
  const crossSite = await fetch(`${open.url}/portal/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
    body: 'email=a%40b.c&password=x',
  });
  t.is(crossSite.status, 403);
  // no account was made: signing in with it fails
  const signIn = await b.post('/portal/signin', { email: 'csrf@example.com', password: PASSWORD });
  t.is(signIn.status, 401);
});

test('a name with <script> is escaped on every page', async (t) => {
  const b = browser(open);
  const name = '<script>alert("x")</script> & "co"';
  t.is((await signUp(b, 'script@example.com', name)).status, 201);
  const dashboard = await b.get('/portal/');
  t.false(dashboard.text.includes('<script>alert'));
  t.true(dashboard.text.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;co&quot;'));
  t.regex(dashboard.headers.get('content-security-policy')!, /script-src 'self'(;|$)/);
  t.notRegex(dashboard.headers.get('content-security-policy')!, /unsafe-inline/);
});

test('passwords follow NIST SP 800-63B lengths: 15 to 128 characters, no composition rules', async (t) => {
  const b = browser(open);
  await b.get('/portal/signup');
  const short = await b.post('/portal/signup', { email: 'short@example.com', name: 'S', password: 'fourteen chars' });
  t.is(short.status, 400);
  t.regex(short.text, /at least 15 characters \(it has 14\)/);
  t.is((await b.post('/portal/signup', { email: 'long@example.com', name: 'L', password: 'x'.repeat(64) + 'y'.repeat(64) })).status, 201);
});

test.serial('wrong passwords are slowed per account: after 5 failures each try waits, even with the right password', async (t) => {
  const account = browser(open);
  await signUp(account, 'slow@example.com');
  const b = browser(open);
  await b.get('/portal/signin');
  for (let i = 0; i < 6; i++) t.is((await b.post('/portal/signin', { email: 'slow@example.com', password: 'wrong password number ' + i })).status, 401);
  const blocked = await b.post('/portal/signin', { email: 'slow@example.com', password: PASSWORD });
  t.is(blocked.status, 429);
  t.is(blocked.headers.get('retry-after'), '1');
  // from another address too: the account's counter, not the address's
  const elsewhere = browser(open);
  await elsewhere.get('/portal/signin');
  t.is((await elsewhere.post('/portal/signin', { email: 'SLOW@example.com', password: PASSWORD })).status, 429);
  await stack.clock.advance(1000);
  t.is((await b.post('/portal/signin', { email: 'slow@example.com', password: 'wrong again' })).status, 401);
  // the 7th failure doubles the wait
  t.is((await b.post('/portal/signin', { email: 'slow@example.com', password: PASSWORD })).headers.get('retry-after'), '2');
  await stack.clock.advance(2000);
  const signedIn = await b.post('/portal/signin', { email: 'slow@example.com', password: PASSWORD });
  t.is(signedIn.status, 303);
  t.is(signedIn.headers.get('location'), '/portal/');
});

test('wrong passwords are slowed per client address across accounts', async (t) => {
  const b = browser(open);
  await b.get('/portal/signin');
  for (let i = 0; i < 21; i++) t.is((await b.post('/portal/signin', { email: `nobody${i}@example.com`, password: 'guess guess guess' })).status, 401);
  t.is((await b.post('/portal/signin', { email: 'nobody-else@example.com', password: 'guess guess guess' })).status, 429);
});

test.serial('in invite mode sign-up needs an invitation, and its link works once', async (t) => {
  const b = browser(invited);
  t.is((await b.get('/portal/signup')).status, 403);
  t.is((await b.post('/portal/signup', { email: 'uninvited@example.com', name: 'U', password: PASSWORD })).status, 403);

  const env = { PORTAL_DATA_DIR: invited.config.dataDir, PORTAL_PUBLIC_URL: 'https://api.animal.store' };
  const invite = async (email: string) => {
    const result = await runCliInProcess(['invite', email, '--json'], env);
    t.is(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as { email: string; link: string };
  };
  const { link, email } = await invite('Guest@Example.com');
  t.is(email, 'guest@example.com');
  t.regex(link, /^https:\/\/api\.animal\.store\/portal\/signup\?invite=[A-Za-z0-9_-]{43}$/);
  const path = link.slice('https://api.animal.store'.length);
  const token = new URL(link).searchParams.get('invite')!;

  const form = await b.get(path);
  t.is(form.status, 200);
  t.regex(form.text, /value="guest@example.com" readonly/);
  // the invitation's email, whatever the form says
  const created = await b.post('/portal/signup', { invite: token, email: 'someone-else@example.com', name: 'Guest', password: PASSWORD });
  t.is(created.status, 201);
  t.truthy(shownKey(created));
  const again = browser(invited);
  t.is((await again.get(path)).status, 403);
  await again.get('/portal/signin');
  t.is((await again.post('/portal/signup', { invite: token, email: 'x@example.com', name: 'X', password: PASSWORD })).status, 403);
  const signIn = await again.post('/portal/signin', { email: 'guest@example.com', password: PASSWORD });
  t.is(signIn.status, 303);

  const late = await invite('late@example.com');
  await inviteClock.advance(8 * 24 * 3600 * 1000);
  t.is((await browser(invited).get(late.link.slice('https://api.animal.store'.length))).status, 403, 'an expired link');
  // normalised as sign-up and sign-in normalise: one address however it was typed
  t.is((await invite('RENE\u0301@Example.com')).email, 'ren\u00e9@example.com');
  for (const address of ['not-an-email', 'eve\u200b@example.com', 'eve\u001b@example.com', '\u0130nfo@example.com']) {
    const bad = await runCliInProcess(['invite', address], env);
    t.is(bad.code, 2, address);
    t.regex(bad.stderr, /It must be an email address/);
  }
});

test('rotating one key by name shows a new key once; the old one keeps working, listed as replaced', async (t) => {
  const b = browser(open);
  const first = shownKey(await signUp(b, 'rotate@example.com'))!;
  await b.get('/portal/');
  const rotated = await b.post('/portal/keys/rotate', { name: 'default' });
  t.is(rotated.status, 200);
  const second = shownKey(rotated)!;
  t.truthy(second);
  t.not(second, first);
  t.regex(rotated.text, /The key it replaces keeps working until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 2[34] h\)\./);
  t.is((await stack.call('/v1/pets', { key: second })).status, 200);
  t.is((await stack.call('/v1/pets', { key: first })).status, 200);
  const dashboard = await b.get('/portal/');
  t.is([...dashboard.text.matchAll(/<tr><td>default<\/td><td><code>[0-9a-f]{8}<\/code>/g)].length, 2, 'both keys listed by name');
  t.regex(dashboard.text, /replaced, works until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 2[34] h\)/);
  t.true(open.audit.some((line) => line.includes('"action":"rotate-key"')));
});

test("a key that expires within the grace period: rotating it says when it really stops, not the grace's 24 hours", async (t) => {
  const b = browser(open);
  await signUp(b, 'rotate-short@example.com');
  const account = open.audit.map((line) => JSON.parse(line)).find((e) => e.action === 'sign-up' && e.ip === b.ip).account;
  const [key] = (await stack.admin(`/consumers/portal-${account}/key-auth`)).body.data as Array<{ id: string }>;
  t.is((await stack.admin(`/consumers/portal-${account}/key-auth/${key!.id}`, { method: 'PATCH', json: { ttl: 3600 } })).status, 200);
  await b.get('/portal/');
  const rotated = await b.post('/portal/keys/rotate', { name: 'default' });
  t.is(rotated.status, 200);
  t.regex(rotated.text, /The key it replaces keeps working until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in (59|60) min\)\./);
  t.notRegex(rotated.text, /24 hours/);
});

test('six rotations of one key at once (a double-clicked button) run in turn: one live key, five replaced', async (t) => {
  const b = browser(open);
  await signUp(b, 'rotate-at-once@example.com');
  await b.get('/portal/');
  const pages = await Promise.all(Array.from({ length: 6 }, () => b.post('/portal/keys/rotate', { name: 'default' })));
  t.deepEqual(pages.map((page) => page.status), [200, 200, 200, 200, 200, 200]);
  const account = open.audit.map((line) => JSON.parse(line)).find((e) => e.action === 'sign-up' && e.ip === b.ip).account;
  const keys = (await stack.admin(`/consumers/portal-${account}/key-auth`)).body.data as Array<{ tags: string[]; ttl: number | null }>;
  t.is(keys.length, 7);
  t.is(keys.filter((key) => !key.tags.includes('replaced')).length, 1, 'one key is live; the others are in their grace period');
});

test('another named key: chosen scopes and expiry, shown once, listed; rotated and revoked alone', async (t) => {
  const b = browser(open);
  const first = shownKey(await signUp(b, 'named@example.com'))!;
  await b.get('/portal/');
  const created = await b.post('/portal/keys', { name: 'ci', scope: ['pets:read', 'orders:read'], expires: '30' });
  t.is(created.status, 201);
  t.is(created.headers.get('cache-control'), 'no-store');
  const ci = shownKey(created)!;
  t.truthy(ci);
  t.is((await stack.call('/v1/pets', { key: ci })).status, 200);
  t.is((await stack.call('/v1/pets', { key: ci, method: 'POST', json: { name: 'Rex' } })).status, 403, 'no pets:write');

  const dashboard = await b.get('/portal/');
  t.regex(dashboard.text, /<tr><td>ci<\/td><td><code>[0-9a-f]{8}<\/code><\/td><td>pets:read, orders:read<\/td><td>[^<]+<\/td><td>[^<]+ UTC \(in (29|30) days\)<\/td>/);
  t.regex(dashboard.text, /<tr><td>default<\/td><td><code>[0-9a-f]{8}<\/code><\/td><td>all<\/td><td>[^<]+<\/td><td>never<\/td>/);
  t.false(dashboard.text.includes(ci), 'the dashboard never shows a key');

  const rotated = await b.post('/portal/keys/rotate', { name: 'ci' });
  t.is(rotated.status, 200);
  const ci2 = shownKey(rotated)!;
  t.is((await stack.call('/v1/pets', { key: ci2, method: 'POST', json: { name: 'Rex' } })).status, 403, 'the new key keeps the scopes');

  await b.get('/portal/');
  const revoked = await b.post('/portal/keys/revoke', { name: 'ci' });
  t.is(revoked.status, 303);
  t.is(revoked.headers.get('location'), '/portal/');
  t.regex((await b.get('/portal/')).text, /2 key\(s\) revoked \(named ci\)/);
  t.is((await stack.call('/v1/pets', { key: ci })).status, 401);
  t.is((await stack.call('/v1/pets', { key: ci2 })).status, 401);
  t.is((await stack.call('/v1/pets', { key: first })).status, 200, 'the other key is untouched');
  const entry = open.audit.map((line) => JSON.parse(line)).find((e) => e.action === 'revoke-key' && e.ip === b.ip);
  t.regex(entry.fingerprint, /^[0-9a-f]{8}$/);
});

test('a bad key form answers the dashboard with a clear message, never a 5xx, and keeps what was typed', async (t) => {
  const b = browser(open);
  await signUp(b, 'bad-forms@example.com');
  await b.get('/portal/');
  const cases: Array<[Record<string, string | string[]>, number, RegExp]> = [
    [{ name: 'Bad Name!', expires: 'never' }, 400, /Key name &quot;Bad Name!&quot;: use 1 to 40/],
    [{ name: '', expires: 'never' }, 400, /Key name &quot;&quot;/],
    [{ name: 'x'.repeat(200), expires: 'never' }, 400, /Key name/],
    [{ name: 'ok', scope: ['pets:read', 'admin:all'], expires: 'never' }, 400, /Unknown scope &quot;admin:all&quot;: use pets:read, pets:write, orders:read, orders:write/],
    [{ name: 'ok', expires: '7' }, 400, /Choose when the key expires from the list/],
    [{ name: 'default', expires: '90' }, 409, /You already have a key named default: choose another name, or rotate that key/],
  ];
  for (const [fields, status, message] of cases) {
    const page = await b.post('/portal/keys', fields);
    t.is(page.status, status, JSON.stringify(fields));
    t.regex(page.text, message);
    t.regex(page.text, /role="alert"/);
    t.is(shownKey(page), undefined);
  }
  const kept = await b.post('/portal/keys', { name: '<script>x', scope: 'orders:write', expires: '90' });
  t.regex(kept.text, /value="&lt;script&gt;x"/, 'the name typed, escaped');
  t.regex(kept.text, /value="orders:write" checked/);
  t.regex(kept.text, /<option value="90" selected>/);
  t.false(kept.text.includes('<script>x'));
  for (const path of ['/portal/keys/rotate', '/portal/keys/revoke']) {
    const unnamed = await b.post(path, {});
    t.is(unnamed.status, 400, path);
    t.regex(unnamed.text, /The form named no key/);
  }
});

test('the plan catalogue from plans.yaml, the account\'s own plan marked, and whom to ask for another', async (t) => {
  const b = browser(open);
  await signUp(b, 'plans@example.com');
  const dashboard = await b.get('/portal/');
  t.regex(dashboard.text, /<th scope="row"><strong>free<\/strong> \(yours\)<\/th><td>60<\/td><td>1000<\/td>/);
  t.regex(dashboard.text, /<th scope="row">pro<\/th><td>300<\/td><td>10000<\/td>/);
  t.regex(dashboard.text, /<th scope="row">business<\/th><td>1000<\/td><td>100000<\/td>/);
  t.regex(dashboard.text, /<th scope="row">enterprise<\/th><td colspan="2">agreed with you<\/td>/);
  t.regex(dashboard.text, /<a href="mailto:plans@animal\.store\?subject=Another%20plan[^"]*&amp;body=Account%3A%20plans%40example\.com[^"]*">plans@animal\.store<\/a>/);
});

test('signing out ends the session server-side: the old cookie opens nothing', async (t) => {
  const b = browser(open);
  await signUp(b, 'out@example.com');
  const kept = new Map(b.cookies);
  t.is((await b.get('/portal/')).status, 200);
  const out = await b.post('/portal/signout', {});
  t.is(out.status, 303);
  t.is(out.headers.get('location'), '/portal/signin');
  const replay = browser(open);
  for (const [name, value] of kept) replay.cookies.set(name, value);
  t.is((await replay.get('/portal/')).status, 302);
  // and a POST without a session is not acted on
  await replay.get('/portal/signin');
  t.is((await replay.post('/portal/keys/rotate', { name: 'default' })).status, 303);
});

test("revoking one key stops it at once, and only the account's own: a forged form naming another account's key answers 404", async (t) => {
  const alice = browser(open);
  const aliceKey = shownKey(await signUp(alice, 'alice-revoke@example.com'))!;
  await alice.get('/portal/');
  const aliceOnly = shownKey(await alice.post('/portal/keys', { name: 'alice-only', expires: 'never' }))!;
  const bob = browser(open);
  const bobKey = shownKey(await signUp(bob, 'bob-revoke@example.com'))!;
  await bob.get('/portal/');
  const aliceConsumer = `portal-${JSON.parse(open.audit.find((l) => l.includes(alice.ip))!).account}`;

  // Bob names Alice's key, and her consumer too: the name is looked up among Bob's keys alone
  for (const path of ['/portal/keys/revoke', '/portal/keys/rotate']) {
    const forged = await bob.post(path, { name: 'alice-only', consumer: aliceConsumer });
    t.is(forged.status, 404, path);
    t.regex(forged.text, /You have no key named alice-only/);
    t.is(shownKey(forged), undefined);
  }
  t.is((await stack.call('/v1/pets', { key: aliceOnly })).status, 200, "Alice's keys are untouched");

  const revoked = await bob.post('/portal/keys/revoke', { name: 'default', consumer: aliceConsumer });
  t.is(revoked.status, 303);
  t.is(revoked.headers.get('location'), '/portal/');
  t.regex((await bob.get('/portal/')).text, /1 key\(s\) revoked \(named default\)/);
  t.is((await stack.call('/v1/pets', { key: bobKey })).status, 401);
  t.is((await stack.call('/v1/pets', { key: aliceKey })).status, 200, "Alice's key of the same name is untouched");
  t.is((await stack.call('/v1/pets', { key: aliceOnly })).status, 200);
  t.true(open.audit.some((line) => line.includes('"action":"revoke-key"')));
});

test('open sign-up with a taken email: 409, counted as a failed sign-in of the address (not of the account), so probing is slowed', async (t) => {
  t.is((await signUp(browser(open), 'taken@example.com')).status, 201);
  const prober = browser(open);
  const taken = await signUp(prober, 'TAKEN@example.com');
  t.is(taken.status, 409);
  t.regex(taken.text, /exists already: sign in instead/);
  const counters = await open.db('signin_failures').whereIn('subject', [prober.ip, 'taken@example.com']).select('scope', 'subject', 'failures');
  t.deepEqual(counters, [{ scope: 'ip', subject: prober.ip, failures: 1 }], 'no lockout of the account through sign-up');
  t.true(open.audit.some((line) => line.includes('"action":"sign-up-email-taken"') && line.includes(prober.ip)));

  // an address blocked for its failures gets 429 before any password is hashed, taken email or not
  await open.db('signin_failures').where({ scope: 'ip', subject: prober.ip }).update({ failures: 21, delay_ms: 1000, blocked_until: stack.clock.now() + 1000 });
  for (const email of ['taken@example.com', 'fresh-while-blocked@example.com']) {
    const blocked = await prober.post('/portal/signup', { email, name: 'P', password: PASSWORD });
    t.is(blocked.status, 429, email);
    t.is(blocked.headers.get('retry-after'), '1');
  }
  t.is(await open.db('accounts').where({ email: 'fresh-while-blocked@example.com' }).first(), undefined);
});

/** The account id of the browser's sign-up, from its audit line. */
const accountOf = (b: PortalBrowser) => JSON.parse(open.audit.find((line) => line.includes('"action":"sign-up"') && line.includes(b.ip))!).account as string;

test('an account whose consumer an admin deleted with the CLI is closed: 403 with a page saying so, never a 5xx, even after signing in again', async (t) => {
  const b = browser(open);
  await signUp(b, 'closed@example.com');
  const consumer = `portal-${accountOf(b)}`;
  const deleted = await runCliInProcess(['delete', consumer], { KONG_ADMIN_URL: stack.gateway.adminUrl });
  t.is(deleted.code, 0, deleted.stderr);

  const closed = async () => {
    const dashboard = await b.get('/portal/');
    t.is(dashboard.status, 403);
    t.regex(dashboard.text, /An administrator closed this account&#39;s access to the API/);
    t.regex(dashboard.text, /Sign out<\/button>/, 'still signed in');
    const actions: Array<[string, Record<string, string>]> = [
      ['/portal/keys', { name: 'again', expires: 'never' }],
      ['/portal/keys/rotate', { name: 'default' }],
      ['/portal/keys/revoke', { name: 'default' }],
    ];
    for (const [path, fields] of actions) {
      const page = await b.post(path, fields);
      t.is(page.status, 403, path);
      t.regex(page.text, /closed this account/);
      t.is(shownKey(page), undefined);
    }
  };
  await closed();
  t.is((await b.post('/portal/signout', {})).status, 303);
  await b.get('/portal/signin');
  t.is((await b.post('/portal/signin', { email: 'closed@example.com', password: PASSWORD })).status, 303);
  await closed();
  t.is((await stack.admin(`/consumers/${consumer}`)).status, 404, 'the portal did not make the consumer again');
});

test('an account holds at most 10 live keys: of 20 creations at once, 9 make a key beside default and 11 answer 409 with a message', async (t) => {
  const b = browser(open);
  await signUp(b, 'many-keys@example.com');
  await b.get('/portal/');
  const pages = await Promise.all(Array.from({ length: 20 }, (_, i) => b.post('/portal/keys', { name: `k${i}`, expires: 'never' })));
  t.is(pages.filter((page) => page.status === 201).length, 9);
  const refused = pages.filter((page) => page.status !== 201);
  t.deepEqual([...new Set(refused.map((page) => page.status))], [409]);
  t.regex(refused[0]!.text, /You have 10 keys, the most an account can have: revoke one to create another/);
  t.regex(refused[0]!.text, /role="alert"/);
  const consumer = `portal-${accountOf(b)}`;
  t.is((await stack.admin(`/consumers/${consumer}/key-auth`)).body.data.length, 10);

  // a key in its grace period is not counted: rotating at the cap works; revoking frees a place
  t.is((await b.post('/portal/keys/rotate', { name: 'default' })).status, 200);
  await b.get('/portal/');
  t.is((await b.post('/portal/keys', { name: 'one-more', expires: 'never' })).status, 409);
  // at the cap, a form's own mistake is still named as such
  const badName = await b.post('/portal/keys', { name: 'Not A Name', expires: 'never' });
  t.is(badName.status, 400);
  t.regex(badName.text, /Key name &quot;Not A Name&quot;: use 1 to 40/);
  t.is((await b.post('/portal/keys/revoke', { name: 'default' })).status, 303);
  await b.get('/portal/');
  t.is((await b.post('/portal/keys', { name: 'one-more', expires: 'never' })).status, 201);
});

test('rotations are bounded too: at most 10 replaced keys in their grace period at once, then 409 with a message', async (t) => {
  const b = browser(open);
  await signUp(b, 'many-rotations@example.com');
  await b.get('/portal/');
  for (let i = 0; i < 10; i++) t.is((await b.post('/portal/keys/rotate', { name: 'default' })).status, 200);
  await b.get('/portal/');
  const refused = await b.post('/portal/keys/rotate', { name: 'default' });
  t.is(refused.status, 409);
  t.regex(refused.text, /10 of your replaced keys are still in their grace period, the most an account can have/);
  t.is(shownKey(refused), undefined);
  t.is((await stack.admin(`/consumers/portal-${accountOf(b)}/key-auth`)).body.data.length, 11);
});

test('signing in or up again ends the session the request came with: after sign-out no earlier cookie opens anything', async (t) => {
  const b = browser(open);
  await signUp(b, 'again-a@example.com');
  const first = new Map(b.cookies);
  const replay = (cookies: Map<string, string>) => {
    const other = browser(open);
    for (const [name, value] of cookies) other.cookies.set(name, value);
    return other.get('/portal/');
  };
  t.is((await b.post('/portal/signin', { email: 'again-a@example.com', password: PASSWORD })).status, 303);
  t.is((await replay(first)).status, 302, 'the session signed in over is ended');
  const second = new Map(b.cookies);
  t.is((await b.get('/portal/')).status, 200);
  t.is((await b.post('/portal/signup', { email: 'again-b@example.com', name: 'B', password: PASSWORD })).status, 201);
  t.is((await replay(second)).status, 302, 'the session signed up over is ended');
  t.is((await b.post('/portal/signout', {})).status, 303);
  for (const cookies of [first, second, new Map(b.cookies)]) t.is((await replay(cookies)).status, 302);
});

test('an email with a control or format character is refused with the form\'s message; names count code points, as passwords do', async (t) => {
  const b = browser(open);
  await b.get('/portal/signup');
  // ESC, DEL, a zero-width space, a right-to-left override, a soft hyphen: Unicode Cc and Cf
  for (const email of ['eve\u001b@example.com', 'eve\u007f@example.com', 'eve\u200b@example.com', 'eve@exa\u202emple.com', 'e\u00adve@example.com']) {
    const page = await b.post('/portal/signup', { email, name: 'Eve', password: PASSWORD });
    t.is(page.status, 400, JSON.stringify(email));
    t.regex(page.text, /Enter an email address such as you@example.com/);
  }
  const escaped = await b.post('/portal/signup', { email: 'eve@example.com', name: 'Eve\u001b[31m', password: PASSWORD });
  t.is(escaped.status, 400);
  t.regex(escaped.text, /Enter a name of 1 to 100 characters, without control characters/);
  t.is(await open.db('accounts').where('email', 'like', 'e%ve@%').first(), undefined, 'nothing stored');

  const long = await b.post('/portal/signup', { email: 'emoji@example.com', name: '🐕'.repeat(101), password: PASSWORD });
  t.is(long.status, 400, '101 emoji are over 100 characters');
  const emoji = await b.post('/portal/signup', { email: 'emoji@example.com', name: '🐕'.repeat(100), password: PASSWORD });
  t.is(emoji.status, 201, '100 emoji are 100 characters (200 UTF-16 code units)');
  t.is((await open.db('accounts').where({ email: 'emoji@example.com' }).first()).name, '🐕'.repeat(100));
});

test('consumers invite refuses, in one line and creating nothing, where no portal store is', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'no-portal-store-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const missing = join(root, 'missing');
  for (const env of [{ PORTAL_DATA_DIR: missing }, { DATA_DIR: missing }, { PORTAL_DATA_DIR: root }]) {
    const result = await runCliInProcess(['invite', 'eve@example.com'], env);
    t.is(result.code, 1, JSON.stringify(env));
    t.is(result.stdout, '');
    t.regex(result.stderr, /^error: no portal store in \S+ \(no portal\.sqlite\): set PORTAL_DATA_DIR .*\n$/);
    t.is(result.stderr.split('\n').length, 2, 'one line');
  }
  t.false(existsSync(missing));
  t.deepEqual(readdirSync(root), []);
});

test("the revocation notice comes from the session, once: a crafted link cannot make the dashboard say a key was revoked", async (t) => {
  const b = browser(open);
  await signUp(b, 'notice@example.com');
  const forged = await b.get('/portal/?revoked=9999&name=default');
  t.is(forged.status, 200);
  t.notRegex(forged.text, /revoked \(named/);
  t.notRegex(forged.text, /9999/);

  const elsewhere = browser(open);
  await elsewhere.get('/portal/signin');
  t.is((await elsewhere.post('/portal/signin', { email: 'notice@example.com', password: PASSWORD })).status, 303);
  await b.post('/portal/keys', { name: 'ci', expires: 'never' });
  await b.get('/portal/');
  t.is((await b.post('/portal/keys/revoke', { name: 'ci' })).headers.get('location'), '/portal/');
  t.notRegex((await elsewhere.get('/portal/')).text, /revoked \(named/, "another session's notice");
  t.regex((await b.get('/portal/')).text, /1 key\(s\) revoked \(named ci\): calls with them now get 401/);
  t.notRegex((await b.get('/portal/')).text, /revoked \(named/, 'shown once');
});

test('emails are one address however they are typed: NFKC and lower case at sign-up, sign-in and in the counters', async (t) => {
  const b = browser(open);
  t.is((await signUp(b, 'zo\u00eb@example.org')).status, 201, 'ë composed');
  const again = browser(open);
  t.is((await signUp(again, 'zoe\u0308@example.org')).status, 409, 'ë decomposed is the same address');
  t.is((await signUp(again, '\uff5a\uff4f\u00eb@example.org')).status, 409, 'fullwidth letters too');
  t.is((await open.db('accounts').where('email', 'like', 'zo%@example.org')).length, 1);
  // İ lower-cases to i and U+0307, which looks like the i of info@: refused as a lookalike
  const dotted = await signUp(again, '\u0130nfo@example.org');
  t.is(dotted.status, 400);
  t.regex(dotted.text, /Enter an email address such as you@example.com/);
  t.is((await signUp(again, 'i\u0307nfo@example.org')).status, 400);

  const signIn = browser(open);
  await signIn.get('/portal/signin');
  t.is((await signIn.post('/portal/signin', { email: 'ZOE\u0308@EXAMPLE.ORG', password: 'wrong wrong wrong wrong' })).status, 401);
  const counter = await open.db('signin_failures').where({ scope: 'account', subject: 'zo\u00eb@example.org' }).first();
  t.is(counter?.failures, 1, 'counted under the normalised address');
  t.is((await signIn.post('/portal/signin', { email: 'ZO\u00cb@example.org', password: PASSWORD })).status, 303);
});

test('an email of 125 emoji signs up and signs in: both forms read the field alike', async (t) => {
  const email = `${'\u{1F415}'.repeat(125)}@example.com`; // 137 code points, 262 UTF-16 code units
  t.is((await signUp(browser(open), email)).status, 201);
  const b = browser(open);
  await b.get('/portal/signin');
  t.is((await b.post('/portal/signin', { email, password: PASSWORD })).status, 303);
});

test("a signed-in form must carry its session's token: another browser's CSRF cookie and token do not post for the session", async (t) => {
  const alice = browser(open);
  await signUp(alice, 'csrf-bound@example.com');
  await alice.get('/portal/');
  const other = browser(open);
  await other.get('/portal/signin');
  const planted = browser(open);
  planted.cookies.set('portal_session', alice.cookies.get('portal_session')!);
  planted.cookies.set('portal_session.sig', alice.cookies.get('portal_session.sig')!);
  planted.cookies.set('portal_csrf', other.cookies.get('portal_csrf')!);
  planted.cookies.set('portal_csrf.sig', other.cookies.get('portal_csrf.sig')!);
  const forged = await planted.post('/portal/keys', { _csrf: other.csrf, name: 'planted', expires: 'never' });
  t.is(forged.status, 403);
  t.regex(forged.text, /Form refused/);
  // the token of alice's pages is not her CSRF cookie's: a token from before sign-in opens nothing either
  t.not(alice.csrf, alice.cookies.get('portal_csrf'));
  t.is((await alice.post('/portal/keys', { name: 'mine', expires: 'never' })).status, 201);
  t.notRegex((await alice.get('/portal/')).text, /planted/);
});
