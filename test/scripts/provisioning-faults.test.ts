import test, { type ExecutionContext } from 'ava';
import { KEY_HASH_TAG, Provisioning, ProvisioningError, digestApiKey, loadCatalogue } from '../../packages/provisioning/index.ts';
import { startKongShapedAdmin } from './kong-shaped-admin.ts';

// Each operation of the provisioning library is all-or-nothing (docs/api-keys.md), also when the
// Admin API fails a write, or applies it and the answer is lost (the connection closes): what is
// undone is registered before each write is sent. Against the Kong-shaped double, whose clock is
// the library's (`now` injected).

async function start(t: ExecutionContext) {
  const admin = await startKongShapedAdmin();
  t.teardown(admin.close);
  const consumer = admin.addConsumer('faults', ['petstore-consumer', 'plan:pro']);
  const provisioning = Provisioning.connect({ url: admin.url }, loadCatalogue(), () => admin.now() * 1000);
  const keys = () =>
    Object.fromEntries(
      admin.credentials(consumer.id).map((c) => [c.id, { tags: c.tags, ttl: c.expiresAt === null ? null : c.expiresAt - admin.now() }]),
    );
  return { admin, consumer, provisioning, keys };
}

const LIVE_TAGS = ['petstore-consumer', 'name:default', KEY_HASH_TAG];

test('rotate-key whose second grace PATCH fails puts the live key back as it was; a rerun makes a key that never expires', async (t) => {
  const { admin, consumer, provisioning, keys } = await start(t);
  // after one rotation with --grace 100000: the live key (listed first) and the one it replaced
  admin.addCredential(consumer.id, digestApiKey('ask_live'), { id: 'a-live', tags: LIVE_TAGS });
  admin.addCredential(consumer.id, digestApiKey('ask_old'), { id: 'b-old', tags: [...LIVE_TAGS, 'replaced'], ttl: 100000 });
  const before = keys();
  admin.failNext('PATCH', /\/key-auth\/b-old$/);

  await t.throwsAsync(provisioning.rotateKey('faults', { graceSeconds: 3600 }), { instanceOf: ProvisioningError, message: /Kong answered 500/ });
  t.deepEqual(keys(), before, 'the live key is live again, never expiring; the new key is gone');

  const rotated = await provisioning.rotateKey('faults', { graceSeconds: 3600 });
  t.is(rotated.expiresAt, null, 'the new key does not inherit a grace period');
});

test('rotate-key whose grace PATCH is applied but unanswered undoes it', async (t) => {
  const { admin, consumer, provisioning } = await start(t);
  admin.addCredential(consumer.id, digestApiKey('ask_live'), { id: 'a-live', tags: [...LIVE_TAGS, 'expires-at:1893459600'], ttl: 3600 });
  admin.advance(100.5);
  admin.dropAnswerNext('PATCH', /\/key-auth\/a-live$/);

  const error = await t.throwsAsync(provisioning.rotateKey('faults', { graceSeconds: 60 }), { instanceOf: ProvisioningError });
  t.is(error?.code, 'admin-api-unreachable');
  const [live] = admin.credentials(consumer.id);
  t.deepEqual(live?.tags, [...LIVE_TAGS, 'expires-at:1893459600']);
  t.true(live!.expiresAt! >= 1893459600 && live!.expiresAt! < 1893459601, `expires at its instant again (${live?.expiresAt})`);
  t.is(admin.credentials(consumer.id).length, 1);
});

test('rotate-key whose new key is created but unanswered removes it', async (t) => {
  const { admin, consumer, provisioning, keys } = await start(t);
  admin.addCredential(consumer.id, digestApiKey('ask_live'), { id: 'a-live', tags: LIVE_TAGS });
  const before = keys();
  admin.dropAnswerNext('POST', /\/key-auth$/);

  await t.throwsAsync(provisioning.rotateKey('faults', { graceSeconds: 60 }), { instanceOf: ProvisioningError });
  t.deepEqual(keys(), before);
});

test('rotate-key without grace whose second DELETE fails gives the first key back, same id, key and expiry', async (t) => {
  const { admin, consumer, provisioning, keys } = await start(t);
  admin.addCredential(consumer.id, digestApiKey('ask_live'), { id: 'a-live', tags: [...LIVE_TAGS, 'expires-at:1893459600'], ttl: 3600 });
  admin.addCredential(consumer.id, digestApiKey('ask_old'), { id: 'b-old', tags: [...LIVE_TAGS, 'replaced'], ttl: 600 });
  const before = keys();
  admin.failNext('DELETE', /\/key-auth\/b-old$/);

  await t.throwsAsync(provisioning.rotateKey('faults', { graceSeconds: 0 }), { instanceOf: ProvisioningError, message: /Kong answered 500/ });
  t.deepEqual(keys(), before);
  t.is(admin.credentials(consumer.id)[1]?.key, digestApiKey('ask_live'));
});

test('rotate-key of keys all rotated out (a rotation cut short) hands on an expires-at tag, never a grace period', async (t) => {
  const { admin, consumer, provisioning } = await start(t);
  admin.addCredential(consumer.id, digestApiKey('ask_grace'), { id: 'a', tags: [...LIVE_TAGS, 'replaced'], ttl: 3600 });
  t.is((await provisioning.rotateKey('faults', { graceSeconds: 60 })).expiresAt, null);

  const other = admin.addConsumer('faults-2', ['petstore-consumer', 'plan:pro']);
  const at = admin.now() + 86400;
  admin.addCredential(other.id, digestApiKey('ask_kept'), { id: 'b', tags: [...LIVE_TAGS, `expires-at:${at}`, 'replaced'], ttl: 86400 });
  t.is((await provisioning.rotateKey('faults-2', { graceSeconds: 100000 })).expiresAt, at);
});

test('create whose answers are lost after Kong applied each write leaves nothing behind', async (t) => {
  for (const [method, path] of [
    ['POST', /^\/consumers$/],
    ['POST', /\/key-auth$/],
    ['POST', /\/plugins$/],
    ['PATCH', /^\/consumers\/[^/]+$/],
  ] as const) {
    const { admin, provisioning } = await start(t);
    admin.dropAnswerNext(method, path);
    const error = await t.throwsAsync(provisioning.create({ username: 'cut-short', plan: 'pro' }), { instanceOf: ProvisioningError });
    t.is(error?.code, 'admin-api-unreachable', `${method} ${path}`);
    t.is((await fetch(`${admin.url}/consumers/cut-short`)).status, 404, `${method} ${path}: rolled back`);
    await provisioning.create({ username: 'cut-short', plan: 'pro' });
  }
});

test('a create killed before its last step leaves a consumer on no plan, which show and create name unfinished', async (t) => {
  const { admin, provisioning } = await start(t);
  // what a create killed after its consumer, key and plan plugin, before tagging the plan, leaves
  admin.addConsumer('killed', ['petstore-consumer']);
  t.like(await provisioning.show('killed'), { plan: null });
  for await (const consumer of provisioning.list({ plan: 'pro' })) t.not(consumer.username, 'killed');
  await t.throwsAsync(provisioning.create({ username: 'killed', plan: 'pro' }), {
    instanceOf: ProvisioningError,
    message: 'consumer killed already exists, unfinished (a create was cut short; its key was never shown): delete it, then create it again',
  });
  await provisioning.delete('killed');
  t.like(await provisioning.create({ username: 'killed', plan: 'pro' }), { plan: 'pro' });
});

test('set-plan whose plugin PATCH is applied but unanswered puts the plan back; its tag never moved', async (t) => {
  const { admin, consumer, provisioning } = await start(t);
  admin.addPlugin(consumer.id, { tags: ['petstore-consumer', 'plan:pro'], config: { minute: 300, day: 10000 } });
  admin.dropAnswerNext('PATCH', /^\/plugins\//);
  await t.throwsAsync(provisioning.setPlan('faults', 'business'), { instanceOf: ProvisioningError });
  t.like(await provisioning.show('faults'), { plan: 'pro', limits: { minute: 300, day: 10000 } });
  t.like(admin.plugins(consumer.id)[0], { tags: ['petstore-consumer', 'plan:pro'] });

  admin.dropAnswerNext('PATCH', /^\/consumers\//);
  await t.throwsAsync(provisioning.setPlan('faults', 'business'), { instanceOf: ProvisioningError });
  t.like(await provisioning.show('faults'), { plan: 'pro', limits: { minute: 300, day: 10000 } });
});

test('set-plan whose new plan plugin is created but unanswered removes it', async (t) => {
  const { admin, consumer, provisioning } = await start(t);
  admin.dropAnswerNext('POST', /\/plugins$/);
  await t.throwsAsync(provisioning.setPlan('faults', 'business'), { instanceOf: ProvisioningError });
  t.deepEqual(admin.plugins(consumer.id), []);
  t.like(await provisioning.show('faults'), { plan: 'pro' });
});

test('a username Kong reads as an id, or a dot segment, is refused before any write', async (t) => {
  const { admin, provisioning } = await start(t);
  for (const username of ['0b9a3c1e-1111-4222-8333-444455556666', '0B9A3C1E-1111-4222-8333-444455556666', '.', '..']) {
    const error = await t.throwsAsync(provisioning.create({ username, plan: 'free' }), { instanceOf: ProvisioningError });
    t.is(error?.code, 'consumer-options', username);
  }
  const error = await t.throwsAsync(provisioning.show('..'), { instanceOf: ProvisioningError });
  t.is(error?.code, 'consumer-options');
  t.deepEqual(admin.requests.filter((r) => r.method !== 'GET'), []);
});
