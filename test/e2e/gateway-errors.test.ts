import { createServer } from 'node:net';
import test from 'ava';
import { contractProblems, documentedErrorCodes } from '../helpers/openapi-contract.ts';
import { startEchoUpstream } from '../helpers/gateway.ts';
import { startStack } from '../helpers/stack.ts';

// Every response Kong itself produces (kong.response.get_source() ~= "service") is rewritten to
// {code, message, status}; the backend's own errors pass through untouched.

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('an unreachable backend answers 502 bad_gateway in the Error shape with the rate-limit headers', async (t) => {
  const stack = await startStack({ upstreamUrl: `http://127.0.0.1:${await closedPort()}` });
  t.teardown(() => stack.dispose());
  const key = await stack.provision('err-502', { minute: 100 });
  const response = await stack.call('/v1/pets', { key });
  t.is(response.status, 502);
  t.is(response.body.code, 'bad_gateway');
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.deepEqual(contractProblems('GET', '/pets', response, { checkHeaders: true }), []);
});

test("the backend's errors pass through untouched", async (t) => {
  const upstream = await startEchoUpstream(() => ({ status: 409, headers: { 'content-type': 'application/json' }, body: '{"code":"pet_not_available","message":"from the backend","status":409}' }));
  const stack = await startStack({ upstreamUrl: upstream.url });
  t.teardown(async () => {
    await stack.dispose();
    await upstream.close();
  });
  const key = await stack.provision('err-passthrough', { minute: 100 });
  const response = await stack.call('/v1/store/orders', { key, method: 'POST', json: { petId: 1 } });
  t.is(response.status, 409);
  t.deepEqual(response.body, { code: 'pet_not_available', message: 'from the backend', status: 409 });
});

test('gateway errors are JSON whatever the Accept header asks for', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  const response = await stack.call('/v1/pets', { headers: { accept: 'text/html' } });
  t.is(response.status, 401);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(response.body.code, 'missing_api_key');
});

test('every code the edge plugin can produce is documented in the OpenAPI document', (t) => {
  for (const code of ['bad_request', 'not_found', 'method_not_allowed', 'request_timeout', 'payload_too_large', 'uri_too_long', 'internal_error', 'bad_gateway', 'service_unavailable', 'gateway_timeout', 'gateway_error', 'missing_api_key', 'invalid_api_key', 'rate_limit_exceeded', 'api_key_banned']) {
    t.true(documentedErrorCodes.has(code), code);
  }
});
