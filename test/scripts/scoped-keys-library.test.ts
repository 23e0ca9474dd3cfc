import test, { type ExecutionContext } from 'ava';
import { Provisioning, ProvisioningError, digestApiKey, loadCatalogue, type ProvisioningErrorCode } from '../../packages/provisioning/index.ts';
import { startKongShapedAdmin } from './kong-shaped-admin.ts';

// The provisioning library's named, scoped, expiring keys (packages/provisioning/README.md), as the
// developer portal will call it, against an Admin API that answers as Kong 3.9 does. Its clock and
// the library's are the same instant here (`now` injected), so ttls and instants are exact.

async function start(t: ExecutionContext) {
  const admin = await startKongShapedAdmin();
  t.teardown(admin.close);
  const consumer = admin.addConsumer('lib-keys', ['petstore-consumer', 'plan:pro']);
  const provisioning = Provisioning.connect({ url: admin.url }, loadCatalogue(), () => admin.now() * 1000);
  const stored = (key: string) => admin.credentials(consumer.id).find((c) => c.key === digestApiKey(key))!;
  const writes = () => admin.requests.filter((r) => r.method !== 'GET');
  return { admin, consumer, provisioning, stored, writes };
}

async function rejects(t: ExecutionContext, promise: Promise<unknown>, code: ProvisioningErrorCode, message: string | RegExp) {
  const error = await t.throwsAsync(promise, { instanceOf: ProvisioningError, message });
  t.is(error?.code, code);
}

test('addKey: a named key with scopes and an expiry, as credential tags and Kong ttl', async (t) => {
  const { admin, provisioning, stored } = await start(t);
  const at = new Date((admin.now() + 30 * 86400) * 1000);
  const added = await provisioning.addKey('lib-keys', { name: 'ci', scopes: ['orders:read', 'pets:read', 'pets:read'], expiresAt: at });
  t.like(added, { username: 'lib-keys', name: 'ci', scopes: ['pets:read', 'orders:read'], expiresAt: admin.now() + 30 * 86400 });
  const credential = stored(added.key);
  t.deepEqual(credential.tags, [
    'petstore-consumer',
    'name:ci',
    'scope:pets:read',
    'scope:orders:read',
    `expires-at:${admin.now() + 30 * 86400}`,
    'key-hash:sha256',
  ]);
  t.is(credential.expiresAt, admin.now() + 30 * 86400);

  const keys = await provisioning.listKeys('lib-keys');
  t.deepEqual(
    keys.map((k) => [k.name, k.fingerprint, k.scopes, k.expiresInSeconds, k.expiresAt]),
    [['ci', added.fingerprint, ['pets:read', 'orders:read'], 30 * 86400, admin.now() + 30 * 86400]],
  );
});

test('addKey refuses a name a live key has, and bad names, scopes and expiries before any write', async (t) => {
  const { admin, provisioning, writes } = await start(t);
  await provisioning.addKey('lib-keys', { name: 'ci' });
  const before = writes().length;
  await rejects(t, provisioning.addKey('lib-keys', { name: 'ci' }), 'key-exists', 'consumer lib-keys already has a key named ci (rotating it replaces it)');
  await rejects(t, provisioning.addKey('lib-keys', { name: 'Build Box' }), 'key-options', /^key name "Build Box": use 1 to 40/);
  await rejects(t, provisioning.addKey('lib-keys', { name: 'x', scopes: ['pets:delete'] }), 'key-options', /^unknown scope "pets:delete"/);
  await rejects(t, provisioning.addKey('lib-keys', { name: 'x', expiresInSeconds: 0 }), 'key-options', /at least 1 second/);
  await rejects(t, provisioning.addKey('lib-keys', { name: 'x', expiresInSeconds: 100_000_001 }), 'key-options', /at most 100000000 seconds/);
  await rejects(t, provisioning.addKey('lib-keys', { name: 'x', expiresAt: new Date((admin.now() - 1) * 1000) }), 'key-options', /is not in the future/);
  await rejects(
    t,
    provisioning.addKey('lib-keys', { name: 'x', expiresInSeconds: 60, expiresAt: new Date((admin.now() + 60) * 1000) }),
    'key-options',
    /not both/,
  );
  t.is(writes().length, before, 'nothing written');
});

test('rotateKey keeps the name, scopes and expiry instant; the old key gets the grace; other names untouched', async (t) => {
  const { admin, provisioning, stored } = await start(t);
  const ci = await provisioning.addKey('lib-keys', { name: 'ci', scopes: ['pets:read'], expiresInSeconds: 7200 });
  const laptop = await provisioning.addKey('lib-keys', { name: 'laptop' });
  admin.advance(100);
  const rotated = await provisioning.rotateKey('lib-keys', { name: 'ci', graceSeconds: 600 });
  t.like(rotated, {
    name: 'ci',
    scopes: ['pets:read'],
    expiresAt: ci.expiresAt,
    previousKeys: 1,
    graceSeconds: 600,
    previousKeysUntil: admin.now() + 600,
    previousKeysExpireFirst: false,
  });
  t.deepEqual(stored(rotated.key).tags, ['petstore-consumer', 'name:ci', 'scope:pets:read', `expires-at:${ci.expiresAt}`, 'key-hash:sha256']);
  // its ttl is the grace now: the instant is no longer its tag's
  t.deepEqual(stored(ci.key).tags, ['petstore-consumer', 'name:ci', 'scope:pets:read', 'key-hash:sha256', 'replaced']);
  t.is(stored(rotated.key).expiresAt, ci.expiresAt);
  t.is(stored(ci.key).expiresAt, admin.now() + 600);
  t.is(stored(laptop.key).expiresAt, null, 'another name is left alone');

  const widened = await provisioning.rotateKey('lib-keys', { name: 'ci', scopes: ['orders:write'], expiresInSeconds: 60 });
  t.like(widened, { scopes: ['orders:write'], expiresAt: admin.now() + 60, previousKeys: 2 });
  // a key that expires before the grace would end keeps its own end, and says so
  const short = await provisioning.addKey('lib-keys', { name: 'short', expiresInSeconds: 300 });
  const soon = await provisioning.rotateKey('lib-keys', { name: 'short', graceSeconds: 3600 });
  t.like(soon, { previousKeys: 1, previousKeysUntil: short.expiresAt, previousKeysExpireFirst: true });
  t.is((await provisioning.rotateKey('lib-keys', { name: 'laptop', graceSeconds: 0 })).previousKeysUntil, null, 'revoked at once');
});

test('an expiry instant is reported exactly and rotations keep it, though Kong rounds the time left down', async (t) => {
  // a clock half a second into its second, Kong's and the library's: Kong reports FLOOR of the
  // time left, so now + ttl would be a second early, and each rotation would lose that second
  const admin = await startKongShapedAdmin({ now: 1893456000.5 });
  t.teardown(admin.close);
  const consumer = admin.addConsumer('lib-exact', ['petstore-consumer', 'plan:pro']);
  const provisioning = Provisioning.connect({ url: admin.url }, loadCatalogue(), () => admin.now() * 1000);
  const stored = (key: string) => admin.credentials(consumer.id).find((c) => c.key === digestApiKey(key))!;
  const midnight = Date.UTC(2030, 0, 31) / 1000;

  const added = await provisioning.addKey('lib-exact', { name: 'ci', expiresAt: new Date(midnight * 1000) });
  t.is(added.expiresAt, midnight);
  t.is(stored(added.key).expiresAt, midnight, "Kong's own instant: created_at + ttl");
  admin.advance(100.25);
  t.deepEqual((await provisioning.listKeys('lib-exact')).map((k) => [k.expiresAt, k.expiresInSeconds]), [[midnight, Math.floor(midnight - admin.now())]]);
  t.deepEqual((await provisioning.expiringKeys(30 * 86400)).map((e) => e.key.expiresAt), [midnight]);

  let key = added.key;
  for (const advance of [0.5, 3600.25, 0.5]) {
    admin.advance(advance);
    const rotated = await provisioning.rotateKey('lib-exact', { name: 'ci', graceSeconds: 60 });
    t.is(rotated.expiresAt, midnight, 'the same instant, rotation after rotation');
    t.is(stored(rotated.key).expiresAt, midnight, 'and Kong cuts the new key off then');
    t.is(stored(key).expiresAt, admin.now() + 60, 'the replaced key: the grace');
    key = rotated.key;
  }
  const live = (await provisioning.listKeys('lib-exact')).filter((k) => !k.replaced);
  t.deepEqual(live.map((k) => k.expiresAt), [midnight]);

  // half a second before the instant, a rotation keeps it: the new key lives that half second
  admin.advance(midnight - admin.now() - 0.5);
  const last = await provisioning.rotateKey('lib-exact', { name: 'ci', graceSeconds: 60 });
  t.is(last.expiresAt, midnight);
  t.is(stored(last.key).expiresAt, midnight);
});

test("a lifetime (expiresInSeconds) is Kong's ttl exactly, its instant fixed at the insert, even across a second boundary", async (t) => {
  const admin = await startKongShapedAdmin({ now: 1893456000.5 });
  t.teardown(admin.close);
  const consumer = admin.addConsumer('lib-lifetime', ['petstore-consumer', 'plan:pro']);
  // the options are read at .5; by the insert, Kong's clock and the library's are 0.6 s on, in the next second
  let reads = 0;
  const provisioning = Provisioning.connect({ url: admin.url }, loadCatalogue(), () => {
    const now = admin.now();
    if (reads++ === 0) admin.advance(0.6);
    return now * 1000;
  });
  const added = await provisioning.addKey('lib-lifetime', { name: 'ci', expiresInSeconds: 7200 });
  const stored = admin.credentials(consumer.id).find((c) => c.key === digestApiKey(added.key))!;
  t.is(stored.expiresAt! - stored.created_at, 7200, "Kong's ttl is the lifetime asked for");
  t.is(added.expiresAt, stored.expiresAt);
  t.true(stored.tags!.includes(`expires-at:${added.expiresAt}`));
});

test('a key without an expires-at tag (made before it) keeps the time left Kong reports', async (t) => {
  const admin = await startKongShapedAdmin({ now: 1893456000.5 });
  t.teardown(admin.close);
  const consumer = admin.addConsumer('lib-legacy', ['petstore-consumer', 'plan:pro']);
  admin.addCredential(consumer.id, digestApiKey('ask_legacy'), { tags: ['petstore-consumer', 'name:ci', 'key-hash:sha256'], ttl: 7200 });
  const provisioning = Provisioning.connect({ url: admin.url }, loadCatalogue(), () => admin.now() * 1000);
  admin.advance(100);
  // as before the tag: now + the time left, rounded down
  t.deepEqual((await provisioning.listKeys('lib-legacy')).map((k) => k.expiresAt), [Math.floor(admin.now()) + 7099]);
  const rotated = await provisioning.rotateKey('lib-legacy', { name: 'ci', graceSeconds: 60 });
  t.is(rotated.expiresAt, Math.floor(admin.now()) + 7099);
  const successor = admin.credentials(consumer.id).find((c) => c.key === digestApiKey(rotated.key))!;
  t.true(successor.tags!.includes(`expires-at:${rotated.expiresAt}`), 'its successor has the tag');
});

test('rotateKey without a name: the one name the keys have, else key-ambiguous', async (t) => {
  const { provisioning } = await start(t);
  const only = await provisioning.addKey('lib-keys', { name: 'ci', scopes: ['orders:read'] });
  const rotated = await provisioning.rotateKey('lib-keys');
  t.like(rotated, { name: only.name, scopes: ['orders:read'] });
  await provisioning.addKey('lib-keys', { name: 'laptop' });
  await rejects(t, provisioning.rotateKey('lib-keys'), 'key-ambiguous', 'consumer lib-keys has keys named ci, laptop: name the one to use');
  await rejects(t, provisioning.rotateKey('lib-keys', { name: 'nope' }), 'key-not-found', 'consumer lib-keys has no key named nope');
  await rejects(t, provisioning.rotateKey('lib-keys', { name: 'ci', graceSeconds: -1 }), 'key-options', /^the grace period must be a whole number/);
});

test('revokeKeys by name takes that key and its predecessor in grace; expiringKeys leaves replaced keys out', async (t) => {
  const { admin, provisioning } = await start(t);
  await provisioning.addKey('lib-keys', { name: 'ci', expiresInSeconds: 3 * 86400 });
  await provisioning.rotateKey('lib-keys', { name: 'ci', graceSeconds: 3600, expiresInSeconds: 10 * 86400 });
  const soon = await provisioning.addKey('lib-keys', { name: 'soon', expiresInSeconds: 86400 });
  await provisioning.addKey('lib-keys', { name: 'forever' });

  const expiring = await provisioning.expiringKeys(7 * 86400);
  t.deepEqual(expiring.map((e) => [e.username, e.key.name, e.key.fingerprint, e.key.expiresInSeconds]), [['lib-keys', 'soon', soon.fingerprint, 86400]]);
  t.is((await provisioning.expiringKeys(11 * 86400)).length, 2);

  t.is(await provisioning.revokeKeys('lib-keys', { name: 'ci' }), 2);
  t.deepEqual((await provisioning.listKeys('lib-keys')).map((k) => k.name).sort(), ['forever', 'soon']);
  admin.advance(86400);
  t.deepEqual((await provisioning.listKeys('lib-keys')).map((k) => k.name), ['forever'], 'an expired key is gone');
});

test('expiringKeys skips a consumer deleted between the listing and its keys (Kong answers 404)', async (t) => {
  const { admin, provisioning } = await start(t);
  await provisioning.addKey('lib-keys', { name: 'soon', expiresInSeconds: 60 });
  admin.failNext('GET', /\/key-auth/, 404);
  t.deepEqual(await provisioning.expiringKeys(3600), []);
  t.is((await provisioning.expiringKeys(3600)).length, 1);
});
