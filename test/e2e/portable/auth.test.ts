import test from 'ava';
import { classifyApiKey, digestApiKey } from '../../../packages/provisioning/index.ts';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { targetWithKey } from '../../helpers/target.ts';

// The API's authentication (spec: "Authentication"; RFC 6750 for the Bearer scheme) as it runs
// through gateway/kong.yml: animal-store-edge turns the bearer token into key-auth's key.
const shared = targetWithKey('auth-alice', { minute: 1000, day: 100000 });

const unauthenticated: Array<[string, Record<string, string>, string]> = [
  ['no Authorization header', {}, 'missing_api_key'],
  ['another scheme (Basic)', { authorization: 'Basic YWxpY2U6c2VjcmV0' }, 'missing_api_key'],
  ['an empty bearer token', { authorization: 'Bearer ' }, 'missing_api_key'],
  ['the scheme alone', { authorization: 'Bearer' }, 'missing_api_key'],
  ['two tokens', { authorization: 'Bearer abc def' }, 'missing_api_key'],
  ['an unknown key', { authorization: 'Bearer not-a-real-key' }, 'invalid_api_key'],
  // not the format of a key (README, "API keys"): refused by the edge plugin before any look-up
  ['a malformed ask_ key', { authorization: 'Bearer ask_not_a_real_key' }, 'invalid_api_key'],
];

for (const [label, headers, code] of unauthenticated) {
  test(`${label} answers 401 ${code} in the Error shape with the rate-limit headers`, async (t) => {
    const response = await shared.target.call('/v1/pets', { headers });
    t.is(response.status, 401);
    t.is(response.body.code, code);
    t.is(response.body.status, 401);
    t.regex(response.headers.get('www-authenticate')!, /^Bearer realm="animal-store"/);
    if (code === 'invalid_api_key') t.regex(response.headers.get('www-authenticate')!, /error="invalid_token"/);
    t.deepEqual(contractProblems('GET', '/pets', response, { checkHeaders: true }), []);
  });
}

test('a valid key as a bearer token answers 200', async (t) => {
  const response = await shared.target.call('/v1/pets', { key: shared.key });
  t.is(response.status, 200);
  t.deepEqual(contractProblems('GET', '/pets', response, { checkHeaders: true }), []);
});

test('the scheme is case-insensitive and surrounding spaces are tolerated (RFC 6750 / RFC 7235)', async (t) => {
  for (const authorization of [`bearer ${shared.key}`, `BEARER ${shared.key}`, `Bearer    ${shared.key}   `]) {
    const response = await shared.target.call('/v1/pets', { headers: { authorization } });
    t.is(response.status, 200, authorization);
  }
});

test('a request of more than 100 header fields, with a valid key or none: 431 request_headers_too_large, not 401', async (t) => {
  // key-auth reads the first 100 headers (kong.request.get_headers()); the edge plugin's key
  // header comes after the client's, so with 100 of them it is never read
  const many = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-filler-${i}`, 'v']));
  const tooMany = await shared.target.call('/v1/pets', { key: shared.key, headers: many(100) });
  t.is(tooMany.status, 431);
  t.deepEqual(tooMany.body, { code: 'request_headers_too_large', message: 'The request has more header fields than the gateway reads (100).', status: 431 });
  t.deepEqual(contractProblems('GET', '/pets', tooMany), []);
  // without a key: none could have been read either
  t.is((await shared.target.call('/v1/pets', { headers: many(100) })).body.code, 'request_headers_too_large');
  // fetch adds host, connection, accept, accept-language, sec-fetch-mode, user-agent, accept-encoding
  // and authorization: 90 of ours keep the key header within the first 100
  t.is((await shared.target.call('/v1/pets', { key: shared.key, headers: many(90) })).status, 200);
  const unknown = await shared.target.call('/v1/pets', { headers: { authorization: 'Bearer not-a-real-key', ...many(90) } });
  t.is(unknown.body.code, 'invalid_api_key');
});

test('a key in the query string is not accepted', async (t) => {
  const response = await shared.target.call(`/v1/pets?apikey=${shared.key}`);
  t.is(response.status, 401);
  t.is(response.body.code, 'missing_api_key');
});

test("a key in key-auth's own header is not accepted", async (t) => {
  const response = await shared.target.call('/v1/pets', { headers: { apikey: shared.key } });
  t.is(response.status, 401);
  t.is(response.body.code, 'missing_api_key');
});

test('a key with one character changed answers 401 invalid_api_key (its checksum fails)', async (t) => {
  const { target, key } = shared;
  const i = 20;
  const changed = key.slice(0, i) + (key[i] === 'A' ? 'B' : 'A') + key.slice(i + 1);
  t.is(classifyApiKey(changed), 'malformed');
  const response = await target.call('/v1/pets', { key: changed });
  t.is(response.status, 401);
  t.is(response.body.code, 'invalid_api_key');
  t.is((await target.call('/v1/pets', { key })).status, 200, 'the key itself still works');
});

test("what Kong stores, the key's digest, is no key: 401 invalid_api_key", async (t) => {
  const { target, key } = shared;
  const stored = await target.admin(`/key-auths/${digestApiKey(key)}`);
  t.is(stored.status, 200);
  t.is(stored.body.key, digestApiKey(key));
  const response = await target.call('/v1/pets', { key: stored.body.key as string });
  t.is(response.status, 401);
  t.is(response.body.code, 'invalid_api_key');
});

// At once on the local gateway (its Admin API answers once the nodes run the write); on Kong in
// hybrid mode once the data planes got the next push (Target.writing waits for it, bounded).
test('a revoked key answers 401 invalid_api_key once the data planes run the deletion', async (t) => {
  const { target } = shared;
  const key = await target.provision('auth-revoked', { minute: 100 });
  t.is((await target.call('/v1/pets', { key })).status, 200);
  // Kong holds the key's digest, and finds the credential by it (key-auth's endpoint_key)
  const consumer = (await target.admin(`/key-auths/${digestApiKey(key)}`)).body.consumer.id;
  const deleted = await target.writing(() => target.admin(`/consumers/${consumer}/key-auth/${digestApiKey(key)}`, { method: 'DELETE' }));
  t.is(deleted.status, 204);
  const response = await target.call('/v1/pets', { key });
  t.is(response.status, 401);
  t.is(response.body.code, 'invalid_api_key');
});
