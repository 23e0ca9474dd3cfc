import test from 'ava';
import { join } from 'node:path';
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

test('over https with the CA given explicitly (ANIMAL_STORE_CA_FILE); without it the self-signed certificate is refused', async (t) => {
  const stack = await startStack({ env: { DECK_ANIMAL_STORE_HTTPS_ONLY: 'true' }, node: { proxyListen: '127.0.0.1:0, 127.0.0.1:0 http2 ssl' } });
  t.teardown(() => stack.dispose());
  const key = await stack.provision('example-tls', { minute: 100 });
  // the default certificate names localhost
  const url = new URL(stack.gateway.node.proxySslUrl!);
  url.hostname = 'localhost';
  const env = { ANIMAL_STORE_URL: `${url.origin}/v1`, ANIMAL_STORE_KEY: key, NODE_OPTIONS: '' };

  const ok = spawnTs('gateway/client/example.ts', [], { ...env, ANIMAL_STORE_CA_FILE: join(stack.gateway.node.prefix, 'ssl', 'kong-default-ca.crt') });
  t.is((await ok.exited).code, 0, ok.output());
  t.regex(ok.output(), /^created pet 1 at \/v1\/pets\/1\n1 pet\(s\) available\n$/);

  const untrusted = spawnTs('gateway/client/example.ts', [], { ...env, ANIMAL_STORE_CA_FILE: '' });
  t.is((await untrusted.exited).code, 1);
  t.regex(untrusted.output(), /^error: POST https:\/\/localhost:\d+\/v1\/pets got no response after 1 attempt\(s\): DEPTH_ZERO_SELF_SIGNED_CERT\n$/);
});
