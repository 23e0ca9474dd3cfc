import { randomUUID } from 'node:crypto';
import anyTest from 'ava';
import { digestApiKey } from '../../../packages/provisioning/index.ts';
import { startTarget, type Target } from '../../helpers/target.ts';

// Idempotency-Key through the gateway: replays are requests like any other (rate-limit headers,
// counted), and keys are scoped by the X-Consumer-ID that key-auth sends upstream, which a client
// cannot forge (key-auth sets it from the credential, kong/plugins/key-auth/handler.lua).
const test = anyTest.serial;
// module state, not ava's context: test/deck/sync-then-e2e.test.ts runs the portable files in one worker
const shared = {} as { target: Target; alice: string; bob: string };

test.before(async () => {
  shared.target = await startTarget();
  shared.alice = await shared.target.provision('idem-alice', { minute: 100, day: 1000 });
  shared.bob = await shared.target.provision('idem-bob', { minute: 100, day: 1000 });
});
test.after.always(async () => {
  await shared.target?.dispose();
});

test('a replay through the gateway carries the rate-limit headers and counts against the limit', async (t) => {
  const { target, alice } = shared;
  const key = randomUUID();
  const init = { key: alice, method: 'POST', headers: { 'Idempotency-Key': key }, json: { name: 'Retry', categoryId: 1 } };
  const first = await target.call('/v1/pets', init);
  t.is(first.status, 201);
  const replay = await target.call('/v1/pets', init);
  t.is(replay.status, 201);
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(replay.body, first.body);
  t.is(replay.headers.get('location'), `/v1/pets/${first.body.id}`);
  for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    t.regex(replay.headers.get(header) ?? '', /^\d+$/, header);
  }
  t.is(Number(replay.headers.get('x-ratelimit-remaining')), Number(first.headers.get('x-ratelimit-remaining')) - 1);
});

test('keys are per consumer, and a client cannot borrow another consumer\'s scope with X-Consumer-ID', async (t) => {
  const { target, alice, bob } = shared;
  const key = randomUUID();
  const body = { name: 'Shared key', categoryId: 1 };
  const fromAlice = await target.call('/v1/pets', { key: alice, method: 'POST', headers: { 'Idempotency-Key': key }, json: body });
  const aliceId = await target.call('/v1/pets', { key: alice, method: 'POST', headers: { 'Idempotency-Key': key }, json: body });
  t.is(aliceId.headers.get('idempotent-replayed'), 'true');
  // Bob sends the same key and Alice's consumer id: his request still runs, in his own scope.
  // Kong's Admin API finds a credential by its key too (key-auth's endpoint_key, kong/plugins/key-auth/daos.lua):
  // the key's digest, which is what Kong holds.
  const aliceConsumerId = (await target.admin(`/key-auths/${digestApiKey(alice)}`)).body.consumer.id as string;
  t.regex(aliceConsumerId, /^[0-9a-f-]{36}$/);
  const fromBob = await target.call('/v1/pets', {
    key: bob,
    method: 'POST',
    headers: { 'Idempotency-Key': key, 'X-Consumer-ID': aliceConsumerId },
    json: body,
  });
  t.is(fromBob.status, 201);
  t.is(fromBob.headers.get('idempotent-replayed'), null);
  t.not(fromBob.body.id, fromAlice.body.id);
});

test('a retry to /v1/pets/ or /v1/pets?x=1 replays the POST /v1/pets it repeats', async (t) => {
  const { target, alice } = shared;
  const init = { key: alice, method: 'POST', headers: { 'Idempotency-Key': randomUUID() }, json: { name: 'Slash', categoryId: 1 } };
  const first = await target.call('/v1/pets', init);
  t.is(first.status, 201);
  for (const path of ['/v1/pets/', '/v1/pets?x=1']) {
    const again = await target.call(path, init);
    t.is(again.status, 201, path);
    t.is(again.headers.get('idempotent-replayed'), 'true', path);
    t.deepEqual(again.body, first.body, path);
  }
});
