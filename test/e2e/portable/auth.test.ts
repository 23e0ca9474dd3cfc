import anyTest, { type TestFn } from 'ava';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { startTarget, type Target } from '../../helpers/target.ts';

// The API's authentication (spec: "Authentication"; RFC 6750 for the Bearer scheme) as it runs
// through gateway/kong.yml: animal-store-edge turns the bearer token into key-auth's key.
const test = anyTest as TestFn<{ stack: Target; key: string }>;

test.before(async (t) => {
  t.context.stack = await startTarget();
  t.context.key = await t.context.stack.provision('auth-alice', { minute: 1000, day: 100000 });
});
test.after.always(async (t) => {
  await t.context.stack?.dispose();
});

const unauthenticated: Array<[string, Record<string, string>, string]> = [
  ['no Authorization header', {}, 'missing_api_key'],
  ['another scheme (Basic)', { authorization: 'Basic YWxpY2U6c2VjcmV0' }, 'missing_api_key'],
  ['an empty bearer token', { authorization: 'Bearer ' }, 'missing_api_key'],
  ['the scheme alone', { authorization: 'Bearer' }, 'missing_api_key'],
  ['two tokens', { authorization: 'Bearer abc def' }, 'missing_api_key'],
  ['an unknown key', { authorization: 'Bearer ask_not_a_real_key' }, 'invalid_api_key'],
];

for (const [label, headers, code] of unauthenticated) {
  test(`${label} answers 401 ${code} in the Error shape with the rate-limit headers`, async (t) => {
    const response = await t.context.stack.call('/v1/pets', { headers });
    t.is(response.status, 401);
    t.is(response.body.code, code);
    t.is(response.body.status, 401);
    t.regex(response.headers.get('www-authenticate')!, /^Bearer realm="animal-store"/);
    if (code === 'invalid_api_key') t.regex(response.headers.get('www-authenticate')!, /error="invalid_token"/);
    t.deepEqual(contractProblems('GET', '/pets', response, { checkHeaders: true }), []);
  });
}

test('a valid key as a bearer token answers 200', async (t) => {
  const response = await t.context.stack.call('/v1/pets', { key: t.context.key });
  t.is(response.status, 200);
  t.deepEqual(contractProblems('GET', '/pets', response, { checkHeaders: true }), []);
});

test('the scheme is case-insensitive and surrounding spaces are tolerated (RFC 6750 / RFC 7235)', async (t) => {
  for (const authorization of [`bearer ${t.context.key}`, `BEARER ${t.context.key}`, `Bearer    ${t.context.key}   `]) {
    const response = await t.context.stack.call('/v1/pets', { headers: { authorization } });
    t.is(response.status, 200, authorization);
  }
});

test('a key in the query string is not accepted', async (t) => {
  const response = await t.context.stack.call(`/v1/pets?apikey=${t.context.key}`);
  t.is(response.status, 401);
  t.is(response.body.code, 'missing_api_key');
});

test("a key in key-auth's own header is not accepted", async (t) => {
  const response = await t.context.stack.call('/v1/pets', { headers: { apikey: t.context.key } });
  t.is(response.status, 401);
  t.is(response.body.code, 'missing_api_key');
});

test('a revoked key answers 401 invalid_api_key at once', async (t) => {
  const { stack } = t.context;
  const key = await stack.provision('auth-revoked', { minute: 100 });
  t.is((await stack.call('/v1/pets', { key })).status, 200);
  const consumer = (await stack.admin(`/key-auths/${key}`)).body.consumer.id;
  const deleted = await stack.admin(`/consumers/${consumer}/key-auth/${key}`, { method: 'DELETE' });
  t.is(deleted.status, 204);
  const response = await stack.call('/v1/pets', { key });
  t.is(response.status, 401);
  t.is(response.body.code, 'invalid_api_key');
});
