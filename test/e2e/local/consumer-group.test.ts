import test from 'ava';
import { generateApiKey, storedCredential } from '../../../packages/provisioning/index.ts';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { startStack } from '../../helpers/stack.ts';

// Our routes serve only our consumers (kong.yml's animal-store-access, allow [animal-store]).
// key-auth credentials are global in Kong OSS: a consumer outside our ACL group whose key our
// key-auth finds (here, one stored hashed as ours are) is refused after rate-limiting, so the
// 403 has our Error shape and the rate headers, as a 413 of the body limit does.

test('a consumer outside the animal-store group is refused 403 forbidden with the rate headers; ours pass', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  const ours = await stack.provision('group-ours', { minute: 100 });

  const created = await stack.admin('/consumers', { method: 'POST', json: { username: 'group-outsider', tags: ['team-other'] } });
  t.is(created.status, 201);
  const key = generateApiKey();
  t.is((await stack.admin('/consumers/group-outsider/key-auth', { method: 'POST', json: storedCredential(key, ['team-other']) })).status, 201);
  t.is((await stack.admin('/consumers/group-outsider/acls', { method: 'POST', json: { group: 'team-other' } })).status, 201);

  for (const path of ['/v1/pets', '/v1/pets/1', '/elsewhere']) {
    const refused = await stack.call(path, { key });
    t.is(refused.status, 403, path);
    t.deepEqual(refused.body, { code: 'forbidden', message: 'This API key may not use the Animal Store API.', status: 403 }, path);
    t.is(refused.headers.get('x-ratelimit-limit'), '60', `${path}: the fallback plan counts the refusal`);
    t.truthy(refused.headers.get('x-ratelimit-remaining'), path);
    t.truthy(refused.headers.get('x-ratelimit-reset'), path);
  }
  t.deepEqual(contractProblems('GET', '/pets', await stack.call('/v1/pets', { key }), { checkHeaders: true }), []);

  t.is((await stack.call('/v1/pets', { key: ours })).status, 200);
  const anonymous = await stack.call('/v1/pets');
  t.is(anonymous.status, 401, 'the anonymous consumer is in the group: its own 401 answers');
  t.is(anonymous.body.code, 'missing_api_key');
  t.truthy(anonymous.headers.get('x-ratelimit-limit'));

  // joining the group is all it takes
  t.is((await stack.admin('/consumers/group-outsider/acls/animal-store', { method: 'PUT', json: {} })).status, 200);
  t.is((await stack.call('/v1/pets', { key })).status, 200);
});
