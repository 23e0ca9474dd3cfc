import { createServer } from 'node:net';
import test from 'ava';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { startStack } from '../../helpers/stack.ts';

// A gateway-produced 502 (kong/error_handlers.lua) is rewritten to {code, message, status}.

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
  // The gateway's own 502 is not the store-orders area's answer: no X-API-Stability, as the
  // contract's Stability section says of the gateway's 502, 503 and 504.
  const orders = await stack.call('/v1/store/orders', { key });
  t.is(orders.status, 502);
  t.is(orders.headers.get('x-api-stability'), null);
  t.deepEqual(contractProblems('GET', '/store/orders', orders, { checkHeaders: true }), []);
});

