import test from 'ava';
import { contractProblems, documentedErrorCodes } from '../../helpers/openapi-contract.ts';
import { targetWithKey } from '../../helpers/target.ts';

// Every response carries the three rate-limit headers (spec: "Rate limit headers"); every error
// is {code, message, status} with a documented code; gateway errors are JSON whatever the Accept.
const shared = targetWithKey('headers-erin', { minute: 100, day: 1000 });

// A method Node's parser does not know reaches the backend through nginx and Kong as any other.
test.serial('a method the API does not know (FOO) answers 405 with Allow; /v1/PETS/1 is no pet; both name the public path', async (t) => {
  const { target, key } = shared;
  const foo = await target.call('/v1/pets', { key, method: 'FOO' });
  t.is(foo.status, 405);
  t.is(foo.headers.get('allow'), 'HEAD, GET, POST');
  t.is(foo.body.code, 'method_not_allowed');
  t.is(foo.body.message, 'Method FOO is not allowed on /v1/pets.', 'the path the client called, not the backend\'s');
  t.regex(foo.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
  const orders = await target.call('/v1/store/orders', { key, method: 'BREW' });
  t.is(orders.status, 405);
  t.is(orders.headers.get('x-api-stability'), 'experimental');
  t.is(orders.body.message, 'Method BREW is not allowed on /v1/store/orders.');
  const upper = await target.call('/v1/PETS/1', { key });
  t.is(upper.status, 404);
  t.is(upper.body.code, 'not_found');
  t.is(upper.body.message, 'No resource at GET /v1/PETS/1.');
  const item = await target.call('/v1/pets/1', { key, method: 'DELETE' });
  t.is(item.body.message, 'Method DELETE is not allowed on /v1/pets/1.');
});

test.serial('200, 201, 400, 401, 404 (inside and outside /v1) and 405 carry X-RateLimit-*; errors use the Error shape', async (t) => {
  const { target, key } = shared;
  const cases: Array<[number, string, RequestInit & { json?: unknown; key?: string }]> = [
    [200, '/v1/pets', { key }],
    [201, '/v1/pets', { key, method: 'POST', json: { name: 'Rex', categoryId: 1 } }],
    [400, '/v1/pets', { key, method: 'POST', json: { name: '' } }],
    [401, '/v1/pets', {}],
    [404, '/v1/unicorns', { key }],
    [404, '/unicorns', { key }],
    [405, '/v1/pets', { key, method: 'DELETE' }],
  ];
  for (const [status, path, init] of cases) {
    const response = await target.call(path, init);
    t.is(response.status, status, `${init.method ?? 'GET'} ${path}`);
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      t.regex(response.headers.get(header) ?? '', /^\d+$/, `${header} on ${status} ${path}`);
    }
    if (status >= 400) {
      t.deepEqual(Object.keys(response.body).sort(), ['code', 'message', 'status']);
      t.is(response.body.status, status);
      t.true(documentedErrorCodes.has(response.body.code), response.body.code);
    }
  }
});

test.serial('X-RateLimit-Remaining counts down by one per request', async (t) => {
  const { target, key } = shared;
  const first = Number((await target.call('/v1/pets', { key })).headers.get('x-ratelimit-remaining'));
  const second = Number((await target.call('/v1/pets', { key })).headers.get('x-ratelimit-remaining'));
  t.is(second, first - 1);
});

test.serial('a valid response validates against the OpenAPI document, headers included', async (t) => {
  const response = await shared.target.call('/v1/pets?limit=2', { key: shared.key });
  t.deepEqual(contractProblems('GET', '/pets', response, { checkHeaders: true }), []);
});

test('gateway errors are JSON whatever the Accept header asks for', async (t) => {
  const response = await shared.target.call('/v1/pets', { headers: { accept: 'text/html' } });
  t.is(response.status, 401);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(response.body.code, 'missing_api_key');
});

test("the backend's own errors pass through untouched", async (t) => {
  const response = await shared.target.call('/v1/store/orders', { key: shared.key, method: 'POST', json: { petId: 9_007_199_254_740_991 } });
  t.is(response.status, 404);
  t.is(response.body.code, 'pet_not_found');
  t.is(response.headers.get('x-api-stability'), 'experimental');
});

test.serial('headers nginx accepts reach the backend and are served there, never refused by it', async (t) => {
  // Kong's nginx takes header lines up to 8 KiB in four such buffers (large_client_header_buffers
  // 4 8k, kong/templates/nginx_kong.lua leaves nginx's default): 3 x 7 KB passes the gateway, so
  // the backend must take at least as much (Node's default is 16 KiB) plus what the gateway adds.
  const { target, key } = shared;
  const headers = Object.fromEntries(['X-Big-A', 'X-Big-B', 'X-Big-C'].map((name) => [name, 'v'.repeat(7000)]));
  const response = await target.call('/v1/pets?limit=1', { key, headers });
  t.is(response.status, 200);
});
