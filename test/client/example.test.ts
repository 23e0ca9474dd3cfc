import test from 'ava';
import { spawnTs } from '../helpers/process.ts';
import { startStack } from '../helpers/stack.ts';

// docs/api.md, "Calling the API": the example script runs as written against a stack.
test('gateway/client/example.ts creates a pet and counts the available ones; a bad key is one error line', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  const key = await stack.provision('example-eve', { minute: 100 });
  const env = { ANIMAL_STORE_URL: `${stack.gateway.proxyUrl}/v1`, NODE_OPTIONS: '' };

  const ok = spawnTs('gateway/client/example.ts', [], { ...env, ANIMAL_STORE_KEY: key });
  t.is((await ok.exited).code, 0, ok.output());
  t.regex(ok.output(), /^created pet 1 at \/v1\/pets\/1\n1 pet\(s\) available\n$/);

  const refused = spawnTs('gateway/client/example.ts', [], { ...env, ANIMAL_STORE_KEY: 'ask_not-a-key' });
  t.is((await refused.exited).code, 1);
  t.is(refused.output(), 'error: 401 invalid_api_key: The API key is invalid, revoked or expired.\n');
});
