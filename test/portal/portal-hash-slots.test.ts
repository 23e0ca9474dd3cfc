// Password hashes at once are bounded (portal/src/hash-slots.ts): each scrypt hash holds 32 MiB
// while it runs, so a flood of sign-ins from many addresses runs a few, queues a few, and answers
// the rest 429 with Retry-After at once, never a 5xx.
import test from 'ava';
import { HashSlots, HashSlotsFull, SCRYPT_COST } from '../../portal/src/index.ts';
import { PortalBrowser, startTestPortal } from '../helpers/portal.ts';

/** A hash the test finishes: resolves when `finish` is called. */
function pendingHash(log: string[], name: string) {
  let finish!: (value: string) => void;
  let fail!: (error: Error) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { hash: () => (log.push(`start ${name}`), done), finish: () => finish(name), fail: () => fail(new Error(`${name} failed`)) };
}

/** Lets queued continuations run (no timers involved). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('at most `concurrent` hashes run; `queued` wait in turn; one more is refused at once', async (t) => {
  const slots = new HashSlots({ concurrent: 2, queued: 1 });
  const log: string[] = [];
  const [a, b, c] = [pendingHash(log, 'a'), pendingHash(log, 'b'), pendingHash(log, 'c')];
  const runs = [slots.run(a.hash), slots.run(b.hash), slots.run(c.hash)];
  await t.throwsAsync(slots.run(() => Promise.resolve('d')), { instanceOf: HashSlotsFull });
  await settle();
  t.deepEqual(log, ['start a', 'start b'], 'the third waits for a slot');

  a.finish();
  await settle();
  t.deepEqual(log, ['start a', 'start b', 'start c'], 'a finished hash hands its slot to the next in line');
  t.is(await runs[0], 'a');

  b.fail();
  await t.throwsAsync(runs[1]!, { message: 'b failed' });
  c.finish();
  t.is(await runs[2], 'c');
  // all slots free again, a failed hash included: two run at once, and one waits
  const log2: string[] = [];
  const [e, f, g] = [pendingHash(log2, 'e'), pendingHash(log2, 'f'), pendingHash(log2, 'g')];
  const again = [slots.run(e.hash), slots.run(f.hash), slots.run(g.hash)];
  await settle();
  t.deepEqual(log2, ['start e', 'start f']);
  e.finish();
  f.finish();
  g.finish();
  t.deepEqual(await Promise.all(again), ['e', 'f', 'g']);
});

test('a flood of sign-ins from many addresses: 401s for those checked, 429 with Retry-After for the rest, no 5xx; then slots are free again', async (t) => {
  // No Admin API is needed: unknown emails are checked against a hash no password matches, at
  // production's cost, whose time the flood is about.
  const portal = await startTestPortal({
    adminUrl: 'http://127.0.0.1:9',
    apiUrl: 'http://127.0.0.1:9/v1',
    signUp: 'open',
    hashSlots: { concurrent: 1, queued: 1 },
    passwordCost: SCRYPT_COST,
  });
  t.teardown(() => portal.dispose());
  const browsers = Array.from({ length: 12 }, (_, i) => new PortalBrowser(portal.url, `203.0.113.${i + 1}`));
  await Promise.all(browsers.map((b) => b.get('/portal/signin')));

  const pages = await Promise.all(
    browsers.map((b, i) => b.post('/portal/signin', { email: `nobody${i}@example.com`, password: 'correct horse battery staple' })),
  );
  const statuses = pages.map((page) => page.status);
  t.true(statuses.every((status) => status === 401 || status === 429), statuses.join(' '));
  const busy = pages.filter((page) => page.status === 429);
  t.true(busy.length >= 1, `some were refused: ${statuses.join(' ')}`);
  t.true(statuses.filter((status) => status === 401).length >= 2, 'the running and the queued check were answered');
  for (const page of busy) {
    t.is(page.headers.get('retry-after'), '1');
    t.true(page.text.includes('Too many people are signing in right now'));
  }
  t.is(portal.audit.filter((line) => JSON.parse(line).action === 'sign-in-busy').length, busy.length);

  const later = await browsers[0]!.post('/portal/signin', { email: 'nobody0@example.com', password: 'correct horse battery staple' });
  t.is(later.status, 401, 'once the flood is answered, a sign-in is checked again');
});
