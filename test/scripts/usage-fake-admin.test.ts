import test from 'ava';
import { startFakeKongAdmin } from '../helpers/fake-kong-admin.ts';
import { KONG_ADMIN_OPENAPI, kongAdminProblems } from '../helpers/kong-admin-contract.ts';

// The usage and show tests meet Kong through test/helpers/fake-kong-admin.ts (Kong cannot run here,
// and the local gateway refuses policy redis): its answers must be what Kong 3.9's OpenAPI says.
// Without ../shared (KONG_ADMIN_OPENAPI undefined) there is nothing to check it against.
if (KONG_ADMIN_OPENAPI !== undefined) test("the fake Admin API answers as Kong's OpenAPI says", async (t) => {
  const admin = await startFakeKongAdmin();
  t.teardown(() => admin.close());
  const consumer = admin.addConsumer('show-contract', { plan: { minute: 60, day: 1000, policy: 'redis', redis: { host: 'redis', port: 6379 } } });
  const get = async (path: string) => (await fetch(`${admin.url}${path}`)).json();
  t.deepEqual(kongAdminProblems('get', '/consumers/{consumer_username_or_id}', 200, await get('/consumers/show-contract')), []);
  t.deepEqual(kongAdminProblems('get', '/consumers', 200, await get('/consumers?tags=petstore-consumer&size=2')), []);
  const plugins = await get(`/consumers/${consumer.id}/plugins`);
  for (const plugin of plugins.data) t.deepEqual(kongAdminProblems('get', '/plugins/{plugin_id}', 200, plugin), []);
  t.deepEqual(kongAdminProblems('get', '/consumers/{consumer_username_or_id}', 404, await get('/consumers/nobody')), []);
});
