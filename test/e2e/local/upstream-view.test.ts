import test from 'ava';
import { startEchoUpstream, type EchoUpstream } from '../../helpers/gateway.ts';
import { startStack, type TestStack } from '../../helpers/stack.ts';

// What the backend receives through kong.yml: no credentials (key-auth hide_credentials, and the
// edge plugin drops Authorization), the consumer headers key-auth sets, /v1 stripped and named in
// X-Forwarded-Prefix (kong/runloop/handler.lua).
let stack: TestStack;
let upstream: EchoUpstream;
let key: string;

test.before(async () => {
  upstream = await startEchoUpstream();
  stack = await startStack({ upstreamUrl: upstream.url });
  key = await stack.provision('upstream-carol', { minute: 100 });
});
test.after.always(async () => {
  await stack?.dispose();
  await upstream?.close();
});

test.serial('the backend never sees the API key', async (t) => {
  await stack.call('/v1/pets?limit=5', { key });
  const seen = upstream.last()!;
  t.is(seen.headers.authorization, undefined);
  t.is(seen.headers.apikey, undefined);
  t.false(JSON.stringify(seen).includes(key));
});

test.serial('the backend receives the path without /v1 and the consumer identity', async (t) => {
  await stack.call('/v1/pets?limit=5&status=sold', { key });
  const seen = upstream.last()!;
  t.is(seen.url, '/pets?limit=5&status=sold');
  t.is(seen.headers['x-forwarded-prefix'], '/v1/');
  t.is(seen.headers['x-forwarded-path'], '/v1/pets');
  t.is(seen.headers['x-consumer-username'], 'upstream-carol');
  t.is(seen.headers['x-anonymous-consumer'], undefined);
  t.regex(String(seen.headers['x-kong-request-id']), /^[0-9a-f]{32}$/);
  t.is(seen.headers.via, '1.1 kong/3.9.3');
});

test.serial('the deprecated GET /v1/pets/{id} reaches the backend as /pets/{id}', async (t) => {
  await stack.call('/v1/pets/42', { key });
  t.is(upstream.last()!.url, '/pets/42');
});
