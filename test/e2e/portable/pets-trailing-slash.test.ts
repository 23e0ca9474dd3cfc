import test from 'ava';
import { targetWithKey } from '../../helpers/target.ts';

// GET /v1/pets/ (a trailing slash, no id) is not GET /v1/pets/{petId}: kong.yml's regex route
// animal-store-v1-pets-slash outranks the deprecated prefix route (kong/router/transform.lua
// get_priority: REGEX_URL_BIT above any prefix length), so it carries no deprecation headers
// and reaches the backend as /v1/ would send it.
const shared = targetWithKey('slash-sam', { minute: 1000, day: 100000 });

for (const method of ['GET', 'HEAD']) {
  test(`${method} /v1/pets/ is not captured by the deprecated get-by-id route`, async (t) => {
    const { target, key } = shared;
    const slash = await target.call('/v1/pets/', { key, method });
    t.is(slash.headers.get('deprecation'), null);
    t.is(slash.headers.get('sunset'), null);
    const list = await target.call('/v1/pets', { key, method });
    t.is(slash.status, list.status, 'answered as the list path is');
  });
}

test('GET /v1/pets/{id} still goes through the deprecated route', async (t) => {
  const { target, key } = shared;
  const response = await target.call('/v1/pets/1', { key });
  t.is(response.headers.get('deprecation'), '@1795305600');
});

// The regex route strips its whole match (X-Forwarded-Prefix /v1/pets/, upstream /pets/): the
// backend builds the next link from X-Forwarded-Path, so it is the list's own.
test('GET /v1/pets/ links its next page at /v1/pets, and the link works', async (t) => {
  const { target, key } = shared;
  for (const name of ['Slash-1', 'Slash-2']) {
    t.is((await target.call('/v1/pets', { key, method: 'POST', json: { name, categoryId: 1 } })).status, 201);
  }
  const first = await target.call('/v1/pets/?limit=1', { key });
  const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1];
  t.regex(next ?? '', /^\/v1\/pets\?limit=1&cursor=/);
  const second = await target.call(next!, { key });
  t.is(second.status, 200);
  t.is(second.body.length, 1);
  t.true(second.body[0].id > first.body[0].id);
});
