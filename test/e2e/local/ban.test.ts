import test from 'ava';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { digestApiKey, generateApiKey, storedCredential } from '../../../packages/provisioning/index.ts';
import { startStack, type TestStack } from '../../helpers/stack.ts';

// Temporary ban (animal-store-edge; kong.yml: more than 20 responses of 429 within 60 s ban the
// key for 900 s). The manual clock replaces the waits.
const NOON = Date.UTC(2030, 0, 1, 12, 0, 0);

test('a key that keeps hitting 429 is banned with its own code, and the ban expires', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  await stack.clock.set(NOON + 5_000);
  const key = await stack.provision('ban-mallory', { minute: 1, day: 1000 });
  const other = await stack.provision('ban-bystander', { minute: 100 });

  t.is((await stack.call('/v1/pets', { key })).status, 200);
  for (let i = 0; i < 21; i++) {
    const response = await stack.call('/v1/pets', { key });
    t.is(response.status, 429);
    t.is(response.body.code, 'rate_limit_exceeded', `429 number ${i + 1}`);
  }

  const banned = await stack.call('/v1/pets', { key });
  t.is(banned.status, 429);
  t.is(banned.body.code, 'api_key_banned');
  t.is(banned.headers.get('retry-after'), '900');
  t.is(banned.headers.get('x-ratelimit-remaining'), '0');
  t.is(banned.headers.get('x-ratelimit-limit'), '1');
  t.deepEqual(contractProblems('GET', '/pets', banned, { checkHeaders: true }), []);
  // The ban's log line names whose key it is (consumer and credential ids), never the key.
  const consumer = (await stack.admin('/consumers/ban-mallory')).body;
  const credential = (await stack.admin('/consumers/ban-mallory/key-auth')).body.data[0];
  const bans = stack.gateway.logs.filter((line) => line.includes('API key banned'));
  t.is(bans.length, 1, bans.join('\n'));
  const expected = `API key banned for 900 s after repeated 429s: consumer ban-mallory (id ${consumer.id}), credential ${credential.id}`;
  t.true(bans[0]!.includes(expected), bans[0]);
  t.false(stack.gateway.logs.some((line) => line.includes(key)), 'the key is never logged');
  t.false(stack.gateway.logs.some((line) => line.includes(digestApiKey(key))), 'nor its digest');
  t.is((await stack.call('/v1/pets', { key: other })).status, 200, 'other keys are not affected');

  await stack.clock.advance(600_000);
  const later = await stack.call('/v1/pets', { key });
  t.is(later.body.code, 'api_key_banned');
  t.is(later.headers.get('retry-after'), '300');

  await stack.clock.advance(300_000);
  const after = await stack.call('/v1/pets', { key });
  t.is(after.status, 200);
});

/** One 200, then 21 refusals of 429: the next request of `key` is banned. */
async function earnBan(stack: TestStack, key: string): Promise<void> {
  await stack.call('/v1/pets', { key });
  for (let i = 0; i < 21; i++) await stack.call('/v1/pets', { key });
}

test('a banned key that is revoked, deleted with its consumer or expired answers 401 invalid_api_key at once', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  await stack.clock.set(NOON + 5_000);
  const revoked = await stack.provision('ban-revoked', { minute: 1, day: 1000 });
  const deleted = await stack.provision('ban-deleted', { minute: 1, day: 1000 });
  const live = await stack.provision('ban-live', { minute: 1, day: 1000 });
  await stack.provision('ban-expiring', { minute: 1, day: 1000 });
  const expiring = generateApiKey();
  const credential = await stack.admin('/consumers/ban-expiring/key-auth', { method: 'POST', json: { ...storedCredential(expiring, []), ttl: 120 } });
  t.is(credential.status, 201);
  for (const key of [revoked, deleted, live, expiring]) {
    await earnBan(stack, key);
    t.is((await stack.call('/v1/pets', { key })).body.code, 'api_key_banned');
  }

  const [revokedCredential] = (await stack.admin('/consumers/ban-revoked/key-auth')).body.data;
  t.is((await stack.admin(`/consumers/ban-revoked/key-auth/${revokedCredential.id}`, { method: 'DELETE' })).status, 204);
  t.is((await stack.admin('/consumers/ban-deleted', { method: 'DELETE' })).status, 204);
  await stack.clock.advance(121_000); // the expiring key's ttl has run out; the bans have not
  for (const [what, key] of [['revoked', revoked], ['deleted', deleted], ['expired', expiring]] as const) {
    const res = await stack.call('/v1/pets', { key });
    t.is(res.status, 401, what);
    t.is(res.body.code, 'invalid_api_key', what);
    t.is(res.headers.get('retry-after'), null, what);
    t.not(res.headers.get('x-ratelimit-limit'), '1', `${what}: not the plan of the consumer it was`);
  }
  const stillBanned = await stack.call('/v1/pets', { key: live });
  t.is(stillBanned.status, 429);
  t.is(stillBanned.body.code, 'api_key_banned');
  t.is(stillBanned.headers.get('retry-after'), '779');
});

test('429s spread over more than the window do not ban', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  await stack.clock.set(NOON);
  const key = await stack.provision('ban-patient', { minute: 1, day: 1000 });
  for (let round = 0; round < 3; round++) {
    await stack.call('/v1/pets', { key });
    for (let i = 0; i < 15; i++) t.is((await stack.call('/v1/pets', { key })).body.code, 'rate_limit_exceeded');
    await stack.clock.advance(61_000);
  }
  t.is((await stack.call('/v1/pets', { key })).status, 200);
});
