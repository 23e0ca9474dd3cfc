import test from 'ava';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { targetWithKey } from '../../helpers/target.ts';

// GET /v1/pets/{petId} is deprecated (spec: removal on 5 December 2030): every response of it,
// the gateway's own included, carries Deprecation (RFC 9745), Sunset (RFC 8594) and the successor.
const shared = targetWithKey('deprecation-dave', { minute: 3, day: 100 });

function assertDeprecated(t: { is(a: unknown, b: unknown, m?: string): void }, headers: Headers, label: string) {
  t.is(headers.get('deprecation'), '@1795305600', label);
  t.is(headers.get('sunset'), 'Thu, 05 Dec 2030 00:00:00 GMT', label);
  t.is(headers.get('link'), '</v1/pets>; rel="successor-version"', label);
}

test.serial('200, 404, 400, 401 and 429 responses of GET /v1/pets/{petId} carry the deprecation headers', async (t) => {
  const { target, key } = shared;
  const created = await target.call('/v1/pets', { key, method: 'POST', json: { name: 'Old', categoryId: 1 } });
  const ok = await target.call(`/v1/pets/${created.body.id}`, { key });
  t.is(ok.status, 200);
  t.deepEqual(contractProblems('GET', '/pets/{petId}', ok, { checkHeaders: true }), []);
  assertDeprecated(t, ok.headers, '200');
  const missing = await target.call('/v1/pets/999999', { key });
  t.is(missing.status, 404);
  t.is(missing.body.code, 'pet_not_found');
  assertDeprecated(t, missing.headers, '404');
  const unauthenticated = await target.call('/v1/pets/1');
  t.is(unauthenticated.status, 401);
  assertDeprecated(t, unauthenticated.headers, '401');
  const limited = await target.call('/v1/pets/1', { key });
  t.is(limited.status, 429);
  assertDeprecated(t, limited.headers, '429');
});

test.serial('other operations carry no deprecation headers', async (t) => {
  const response = await shared.target.call('/v1/pets');
  t.is(response.headers.get('deprecation'), null);
  t.is(response.headers.get('sunset'), null);
});
