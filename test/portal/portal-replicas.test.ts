// Two portal processes on one PostgreSQL database (PORTAL_DATABASE_URL), as replicas behind the
// gateway run: sessions, the failed sign-in counters, invitations and the unique email are the
// store's, so what one replica did holds on the other. No PORTAL_COOKIE_SECRET: the replicas
// share the one the first of them wrote to the store.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import knex, { type Knex } from 'knex';
import { inviteByEmail, purgeExpired, startPortal } from '../../portal/src/index.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { ManualClock } from '../helpers/clock.ts';
import { PortalBrowser } from '../helpers/portal.ts';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { spawnTs, type SpawnedProcess } from '../helpers/process.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';

const PASSWORD = 'correct horse battery staple';

interface Replica {
  process: SpawnedProcess;
  url: string;
}

const test = anyTest as TestFn<unknown>;
let postgres: TestPostgres;
let databaseUrl: string;
let stack: TestStack;
let dataDir: string;
let db: Knex;
let a: Replica;
let b: Replica;
let ips = 0;
/** A browser with a client address of its own, so that per-address counters never span two tests. */
const browser = (replica: Replica, ip = `203.0.113.${++ips}`) => new PortalBrowser(replica.url, ip);

async function startReplica(): Promise<Replica> {
  const process = spawnTs('portal/src/main.ts', [], {
    PORTAL_DATABASE_URL: databaseUrl,
    PORTAL_DATA_DIR: dataDir,
    PORTAL_COOKIE_SECRET: '',
    PORTAL_SIGNUP: 'open',
    PORTAL_PORT: '0',
    KONG_ADMIN_URL: stack.gateway.adminUrl,
    KONG_STATUS_URL: '',
  });
  const [, url] = await process.waitFor(/listening on (http:\/\/\S+)/, 60_000);
  return { process, url: url! };
}

test.before(async () => {
  postgres = await startTestPostgres();
  databaseUrl = await postgres.createDatabase('portal');
  stack = await startStack();
  dataDir = mkdtempSync(join(tmpdir(), 'portal-replicas-'));
  // started together: one runs the migrations, the other waits for knex's lock
  [a, b] = await Promise.all([startReplica(), startReplica()]);
  db = knex({ client: 'pg', connection: databaseUrl });
});

test.after.always(async () => {
  for (const replica of [a, b]) {
    if (!replica) continue;
    replica.process.child.kill('SIGTERM');
    await replica.process.exited;
  }
  await db?.destroy();
  await stack?.dispose();
  await postgres?.dispose();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function signUp(page: PortalBrowser, email: string) {
  await page.get('/portal/signup');
  return page.post('/portal/signup', { email, name: 'Replica', password: PASSWORD });
}

test('the store is PostgreSQL: no SQLite file, and one cookie secret written for both replicas', async (t) => {
  t.deepEqual(readdirSync(dataDir), []);
  const secrets = await db('settings').where({ name: 'cookie_secret' });
  t.is(secrets.length, 1);
  t.regex(secrets[0].value, /^[A-Za-z0-9_-]{43}$/);
});

test('a session made on replica A opens the dashboard on B; signing out on B ends it on A', async (t) => {
  const onA = browser(a);
  t.is((await signUp(onA, 'session@example.com')).status, 201);
  const onB = browser(b, onA.ip);
  for (const [name, value] of onA.cookies) onB.cookies.set(name, value);
  const dashboard = await onB.get('/portal/');
  t.is(dashboard.status, 200);
  t.regex(dashboard.text, /Plan <strong>free<\/strong>/);
  t.is((await onB.post('/portal/signout', {})).status, 303);
  const after = await onA.get('/portal/');
  t.is(after.status, 302, 'the session row is gone for every replica');
  t.is(after.headers.get('location'), '/portal/signin');
});

test('failed sign-ins on replica A slow the account on replica B, even with the right password', async (t) => {
  t.is((await signUp(browser(a), 'slowed@example.com')).status, 201);
  const onA = browser(a);
  const onB = browser(b);
  // B's form first: the first wait is 1 s of real time, and only B's POST should fall inside it
  await onB.get('/portal/signin');
  await onA.get('/portal/signin');
  for (let i = 0; i < 6; i++) t.is((await onA.post('/portal/signin', { email: 'slowed@example.com', password: `wrong password ${i}` })).status, 401);
  const blocked = await onB.post('/portal/signin', { email: 'slowed@example.com', password: PASSWORD });
  t.is(blocked.status, 429);
  t.is(blocked.headers.get('retry-after'), '1');
});

test('failures counted at once on both replicas all count: one UPSERT each, no lost increment', async (t) => {
  const ip = `203.0.113.${++ips}`;
  const attempts = Array.from({ length: 10 }, async (_, i) => {
    const page = browser(i % 2 === 0 ? a : b, ip);
    await page.get('/portal/signin');
    return (await page.post('/portal/signin', { email: `nobody${i}@example.com`, password: 'guess guess guess' })).status;
  });
  t.deepEqual(await Promise.all(attempts), Array(10).fill(401));
  const row = await db('signin_failures').where({ scope: 'ip', subject: ip }).first();
  t.is(row.failures, 10);
  t.is(Number(row.blocked_until), 0, 'under the 20 free failures of an address');
});

test('an invitation used on replica A is refused on replica B', async (t) => {
  const { link } = await inviteByEmail('invited@example.com', { PORTAL_DATABASE_URL: databaseUrl, PORTAL_PUBLIC_URL: 'https://api.animal.store' });
  const token = new URL(link).searchParams.get('invite')!;
  const onA = browser(a);
  t.is((await onA.get(`/portal/signup?invite=${token}`)).status, 200);
  t.is((await onA.post('/portal/signup', { invite: token, email: 'ignored@example.com', name: 'Guest', password: PASSWORD })).status, 201);
  const onB = browser(b);
  t.is((await onB.get(`/portal/signup?invite=${token}`)).status, 403);
  await onB.get('/portal/signin');
  t.is((await onB.post('/portal/signup', { invite: token, email: 'x@example.com', name: 'X', password: PASSWORD })).status, 403);
});

test("consumers invite refuses a PostgreSQL database without the portal's tables, and makes none", async (t) => {
  const empty = await postgres.createDatabase('not_the_portal');
  const result = await runCliInProcess(['invite', 'eve@example.com'], { PORTAL_DATABASE_URL: empty });
  t.is(result.code, 1);
  t.is(result.stdout, '');
  t.regex(result.stderr, /^error: no portal store in the database of PORTAL_DATABASE_URL \(no portal tables\): .*\n$/);
  t.false(result.stderr.includes(empty), 'the URL is never printed');
  const probe = knex({ client: 'pg', connection: empty });
  t.teardown(() => probe.destroy());
  t.deepEqual((await probe.raw("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows, []);
});

test('the same email signed up at once on both replicas makes one account', async (t) => {
  const [first, second] = await Promise.all([signUp(browser(a), 'Twice@Example.com'), signUp(browser(b), 'twice@example.com')]);
  t.deepEqual([first.status, second.status].sort(), [201, 409]);
  const accounts = await db('accounts').where({ email: 'twice@example.com' });
  t.is(accounts.length, 1);
  // the portal as production starts it hashes at production's cost (the tests' own portals do not)
  t.regex(accounts[0].password_hash, /^scrypt\$32768\$8\$1\$/);
  const consumers = await stack.admin(`/consumers?tags=petstore-consumer`);
  t.is(consumers.body.data.filter((c: { custom_id: string }) => c.custom_id === accounts[0].id).length, 1);
});

test('rotations of one key at once on both replicas run in turn (an advisory lock): one live key', async (t) => {
  const onA = browser(a);
  t.is((await signUp(onA, 'rotate-replicas@example.com')).status, 201);
  await onA.get('/portal/');
  // the same browser session, its requests spread over both replicas
  const onB = browser(b, onA.ip);
  for (const [name, value] of onA.cookies) onB.cookies.set(name, value);
  onB.csrf = onA.csrf;
  const pages = await Promise.all([onA, onB, onA, onB, onA, onB, onA, onB, onA, onB].map((replica) => replica.post('/portal/keys/rotate', { name: 'default' })));
  t.true(pages.every((page) => page.status === 200));
  const account = await db('accounts').where({ email: 'rotate-replicas@example.com' }).first();
  const keys = (await stack.admin(`/consumers/portal-${account.id}/key-auth`)).body.data as Array<{ tags: string[] }>;
  t.is(keys.length, 11);
  t.is(keys.filter((key) => !key.tags.includes('replaced')).length, 1);
});

test('the purge deletes expired sessions and invitations and forgotten counters, and keeps the rest', async (t) => {
  const now = Date.now();
  const account = { id: '00000000-0000-4000-8000-000000000001' };
  await db('accounts').insert({ ...account, email: 'purge@example.com', name: 'P', password_hash: 'x', consumer: null, created_at: now });
  await db('sessions').insert([
    { id_hash: 'e'.repeat(64), account_id: account.id, expires_at: now - 1 },
    { id_hash: 'l'.repeat(64), account_id: account.id, expires_at: now + 60_000 },
  ]);
  await db('invites').insert([
    { token_hash: 'e'.repeat(64), email: 'old@example.com', expires_at: now - 1, used_at: null },
    { token_hash: 'l'.repeat(64), email: 'new@example.com', expires_at: now + 60_000, used_at: null },
  ]);
  const counter = { failures: 30, delay_ms: 1000 };
  await db('signin_failures').insert([
    { scope: 'ip', subject: 'forgotten', ...counter, blocked_until: now - 3_000_000, last_failure: now - 3_700_000 },
    { scope: 'ip', subject: 'still-blocked', ...counter, blocked_until: now + 60_000, last_failure: now - 3_700_000 },
    { scope: 'account', subject: 'recent', ...counter, blocked_until: 0, last_failure: now - 60_000 },
  ]);
  await purgeExpired(db, now);
  t.deepEqual((await db('sessions').whereIn('id_hash', ['e'.repeat(64), 'l'.repeat(64)]).pluck('id_hash')), ['l'.repeat(64)]);
  t.deepEqual((await db('invites').whereIn('token_hash', ['e'.repeat(64), 'l'.repeat(64)]).pluck('token_hash')), ['l'.repeat(64)]);
  t.deepEqual((await db('signin_failures').whereIn('subject', ['forgotten', 'still-blocked', 'recent']).pluck('subject')).sort(), ['recent', 'still-blocked']);
});

test('on PostgreSQL the counter doubles the wait from one failure to the next and starts again once forgotten (a manual clock)', async (t) => {
  // a third replica, in process, so that its clock can be moved; the counters' arithmetic is the UPSERT's
  const clock = new ManualClock(Date.UTC(2031, 0, 1));
  const replica = await startPortal(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl,
      signUp: 'open',
      publicUrl: 'http://portal.test',
      apiUrl: 'http://portal.test/v1',
      adminUrl: stack.gateway.adminUrl,
      statusUrls: [],
    },
    { clock: clock.now, audit: () => undefined },
  );
  try {
    const page = browser({ process: a.process, url: replica.url });
    await page.get('/portal/signin');
    const attempt = async () => {
      const answer = await page.post('/portal/signin', { email: 'doubling@example.com', password: 'not the password' });
      return [answer.status, answer.headers.get('retry-after')];
    };
    for (let i = 0; i < 6; i++) t.deepEqual(await attempt(), [401, null]);
    t.deepEqual(await attempt(), [429, '1']);
    await clock.advance(1000);
    t.deepEqual(await attempt(), [401, null], 'the 7th failure');
    t.deepEqual(await attempt(), [429, '2'], 'doubles the wait');
    await clock.advance(2000 + 3600_000);
    t.deepEqual(await attempt(), [401, null], 'an hour without failure and no wait left: forgotten');
    const row = await db('signin_failures').where({ scope: 'account', subject: 'doubling@example.com' }).first();
    t.like(row, { failures: 1, blocked_until: '0' });
  } finally {
    await replica.close();
  }
});
