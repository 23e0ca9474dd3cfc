import test from 'ava';
import { generateApiKey, storedCredential } from '../../../packages/provisioning/index.ts';
import { startStack } from '../../helpers/stack.ts';

// key-auth credentials with a ttl stop authenticating when it runs out (Kong filters expired
// rows); the manual clock stands in for the wait.
test('an expired key (credential ttl) answers 401 once the ttl has passed', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  await stack.provision('auth-ttl', { minute: 100 });
  const key = generateApiKey();
  const credential = await stack.admin('/consumers/auth-ttl/key-auth', { method: 'POST', json: { ...storedCredential(key, []), ttl: 60 } });
  t.is(credential.status, 201);
  t.is((await stack.call('/v1/pets', { key })).status, 200);
  await stack.clock.advance(61_000);
  t.is((await stack.call('/v1/pets', { key })).status, 401);
});
