import { randomUUID } from 'node:crypto';
import test from 'ava';
import { request, type JsonResponse } from '../helpers/backend.ts';
import { startEmptyGateway, type TestGateway } from '../helpers/gateway.ts';

// The `acls` entity on the Admin API, transcribed from Kong 3.9.3's
// spec/03-plugins/18-acl/01-api_spec.lua (file:line in each test's name), plus Kong's unique
// cache key (kong/plugins/acl/daos.lua: consumer + group) as the PostgreSQL strategy reports it.
// Every case of the spec applies; bp.acls:insert is a POST here.
type AdminCall = (path: string, init?: RequestInit & { json?: unknown }) => Promise<JsonResponse>;
let gateway: TestGateway;
let admin: AdminCall;
let bob: { id: string };
const SPEC = '01-api_spec.lua';

test.before(async () => {
  gateway = await startEmptyGateway();
  admin = (path, init = {}) => request(`${gateway.adminUrl}${path}`, init);
  bob = (await admin('/consumers', { method: 'POST', json: { username: 'bob' } })).body;
});
test.after.always(async () => {
  await gateway?.dispose();
});

/** db:truncate("acls") */
async function truncate(admin: AdminCall): Promise<void> {
  for (const acl of (await admin('/acls?size=1000')).body.data as Array<{ id: string }>) {
    await admin(`/acls/${acl.id}`, { method: 'DELETE' });
  }
}

async function insert(admin: AdminCall, consumerId: string, group: string): Promise<{ id: string; group: string }> {
  const created = await admin('/acls', { method: 'POST', json: { group, consumer: { id: consumerId } } });
  if (created.status !== 201) throw new Error(`insert acl: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

test.serial(`POST /consumers/:consumer/acls creates an ACL association (${SPEC}:48)`, async (t) => {
  await truncate(admin);
  const res = await admin('/consumers/bob/acls', { method: 'POST', json: { group: 'admin' } });
  t.is(res.status, 201);
  t.is(res.body.consumer.id, bob.id);
  t.is(res.body.group, 'admin');
  t.deepEqual(Object.keys(res.body).sort(), ['consumer', 'created_at', 'group', 'id', 'tags']);
});

test.serial(`POST /consumers/:consumer/acls/ creates an ACL association with tags (${SPEC}:62)`, async (t) => {
  await truncate(admin);
  const res = await admin('/consumers/bob/acls/', { method: 'POST', json: { group: 'yoloers', tags: ['tag1', 'tag2'] } });
  t.is(res.status, 201);
  t.is(res.body.consumer.id, bob.id);
  t.deepEqual(res.body.tags, ['tag1', 'tag2']);
});

test.serial(`POST /consumers/:consumer/acls without group: 400 (${SPEC}:81)`, async (t) => {
  const res = await admin('/consumers/bob/acls', { method: 'POST', json: {} });
  t.is(res.status, 400);
  t.deepEqual(res.body.fields, { group: 'required field missing' });
});

test.serial(`GET /consumers/:consumer/acls retrieves the first page (${SPEC}:99)`, async (t) => {
  await truncate(admin);
  for (const group of ['g1', 'g2', 'g3']) await insert(admin, bob.id, group);
  const res = await admin('/consumers/bob/acls');
  t.is(res.status, 200);
  t.is(res.body.data.length, 3);
});

/** The before_each of /consumers/:consumer/acls/:id (01-api_spec.lua:113-122). */
async function helloAcls(admin: AdminCall, bobId: string) {
  await truncate(admin);
  return { acl: await insert(admin, bobId, 'hello'), acl2: await insert(admin, bobId, 'hello2') };
}

test.serial(`GET /consumers/:consumer/acls/:id retrieves by id and by group (${SPEC}:125, :131)`, async (t) => {
  const { acl } = await helloAcls(admin, bob.id);
  t.is((await admin(`/consumers/bob/acls/${acl.id}`)).body.id, acl.id);
  const byGroup = await admin(`/consumers/bob/acls/${acl.group}`);
  t.is(byGroup.status, 200);
  t.is(byGroup.body.id, acl.id);
});

test.serial(`GET by id or group only if the ACL belongs to the specified consumer (${SPEC}:137, :148)`, async (t) => {
  const { acl } = await helloAcls(admin, bob.id);
  await admin('/consumers', { method: 'POST', json: { username: 'alice' } });
  t.is((await admin(`/consumers/bob/acls/${acl.id}`)).status, 200);
  t.is((await admin(`/consumers/alice/acls/${acl.id}`)).status, 404);
  t.is((await admin(`/consumers/bob/acls/${acl.group}`)).status, 200);
  t.is((await admin(`/consumers/alice/acls/${acl.group}`)).status, 404);
  t.is((await admin('/consumers/nobody/acls/hello')).status, 404, 'an unknown consumer is 404 too');
});

test.serial('OPTIONS by group runs the plugin\'s before too: a group the consumer is not in is 404, one it is in 204 (kong/plugins/acl/api.lua:14-50)', async (t) => {
  const { acl } = await helloAcls(admin, bob.id);
  const options = async (path: string) => {
    const res = await fetch(`${gateway.adminUrl}${path}`, { method: 'OPTIONS' });
    return [res.status, res.headers.get('allow'), res.status === 404 ? await res.json() : await res.text()];
  };
  const allowed = 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT';
  t.deepEqual(await options(`/consumers/bob/acls/${acl.group}`), [204, allowed, '']);
  t.deepEqual(await options('/consumers/bob/acls/nope'), [404, null, { message: 'Not found' }]);
  t.deepEqual(await options(`/consumers/nobody/acls/${acl.group}`), [404, null, { message: 'Not found' }]);
  // a UUID is an id: the before leaves it to the generic endpoint, whose OPTIONS looks nothing up
  t.deepEqual(await options(`/consumers/bob/acls/${randomUUID()}`), [204, allowed, '']);
});

test.serial(`GET the right ACL by group when consumers share a group, created with POST (${SPEC}:155)`, async (t) => {
  t.is((await admin('/consumers', { method: 'POST', json: { username: 'anna' } })).status, 201);
  t.is((await admin('/consumers', { method: 'POST', json: { username: 'jack' } })).status, 201);
  const ag = await admin('/consumers/anna/acls', { method: 'POST', json: { group: 'foo' } });
  const jg = await admin('/consumers/jack/acls', { method: 'POST', json: { group: 'foo' } });
  t.is(ag.status, 201);
  t.is(jg.status, 201);
  t.deepEqual((await admin('/consumers/anna/acls/foo')).body, ag.body);
  t.deepEqual((await admin('/consumers/jack/acls/foo')).body, jg.body);
  t.notDeepEqual(ag.body, jg.body);
  t.is((await admin('/consumers/anna', { method: 'DELETE' })).status, 204);
  t.is((await admin('/consumers/jack', { method: 'DELETE' })).status, 204);
});

test.serial(`GET the right ACL by group when consumers share a group, created with PUT (${SPEC}:221)`, async (t) => {
  t.is((await admin('/consumers/anna', { method: 'PUT' })).status, 200);
  t.is((await admin('/consumers/jack', { method: 'PUT' })).status, 200);
  const ag = await admin('/consumers/anna/acls/foo', { method: 'PUT' });
  const jg = await admin('/consumers/jack/acls/foo', { method: 'PUT' });
  t.is(ag.status, 200);
  t.is(jg.status, 200);
  t.is(ag.body.group, 'foo');
  t.deepEqual((await admin('/consumers/anna/acls/foo')).body, ag.body);
  t.deepEqual((await admin('/consumers/jack/acls/foo')).body, jg.body);
  t.notDeepEqual(ag.body, jg.body);
  // A second PUT of the same group updates that ACL: same id.
  t.is((await admin('/consumers/anna/acls/foo', { method: 'PUT', json: { tags: ['again'] } })).body.id, ag.body.id);
  t.is((await admin('/consumers/anna', { method: 'DELETE' })).status, 204);
  t.is((await admin('/consumers/jack', { method: 'DELETE' })).status, 204);
  t.is((await admin(`/acls/${ag.body.id}`)).status, 404, 'the consumer took its ACLs with it (on_delete cascade)');
});

test.serial(`PUT /consumers/:consumer/acls/:group upserts an ACL's group name (${SPEC}:262)`, async (t) => {
  await helloAcls(admin, bob.id);
  const res = await admin('/consumers/bob/acls/pro', { method: 'PUT', json: {} });
  t.is(res.status, 200);
  t.is(res.body.consumer.id, bob.id);
  t.is(res.body.group, 'pro');
});

test.serial(`PUT with a group that is not a string: 400 (${SPEC}:275)`, async (t) => {
  const res = await admin('/consumers/bob/acls/f7852533-9160-4f5a-ae12-1ab99219ea95', { method: 'PUT', json: { group: 123 } });
  t.is(res.status, 400);
  t.deepEqual(res.body.fields, { group: 'expected a string' });
});

test.serial(`PATCH updates an ACL group by id and by group (${SPEC}:292, :307)`, async (t) => {
  const { acl, acl2 } = await helloAcls(admin, bob.id);
  const byId = await admin(`/consumers/bob/acls/${acl.id}`, { method: 'PATCH', json: { group: 'updatedGroup' } });
  t.is(byId.status, 200);
  t.is(byId.body.group, 'updatedGroup');
  const byGroup = await admin(`/consumers/bob/acls/${acl2.group}`, { method: 'PATCH', json: { group: 'updatedGroup2' } });
  t.is(byGroup.status, 200);
  t.is(byGroup.body.group, 'updatedGroup2');
  t.is(byGroup.body.id, acl2.id);
});

test.serial(`PATCH with a group that is not a string: 400 (${SPEC}:323)`, async (t) => {
  const { acl } = await helloAcls(admin, bob.id);
  const res = await admin(`/consumers/bob/acls/${acl.id}`, { method: 'PATCH', json: { group: 123 } });
  t.is(res.status, 400);
  t.deepEqual(res.body.fields, { group: 'expected a string' });
});

test.serial(`DELETE an ACL group by id and by group; 404 for a missing group or id (${SPEC}:340, :344, :349, :353)`, async (t) => {
  const { acl, acl2 } = await helloAcls(admin, bob.id);
  t.is((await admin(`/consumers/bob/acls/${acl.id}`, { method: 'DELETE' })).status, 204);
  t.is((await admin(`/consumers/bob/acls/${acl2.group}`, { method: 'DELETE' })).status, 204);
  t.deepEqual((await admin('/consumers/bob/acls')).body.data, []);
  t.is((await admin('/consumers/bob/acls/blah', { method: 'DELETE' })).status, 404);
  t.is((await admin('/consumers/bob/acls/00000000-0000-0000-0000-000000000000', { method: 'DELETE' })).status, 404);
});

test.serial(`GET /acls lists every consumer's ACLs, with and without trailing slash, and pages (${SPEC}:387, :394, :401)`, async (t) => {
  await truncate(admin);
  const builder = await admin('/consumers', { method: 'POST', json: { username: 'bob-the-buidler' } });
  for (const consumer of [bob.id, builder.body.id]) for (const group of ['group1', 'group2', 'group3']) await insert(admin, consumer, group);
  t.is((await admin('/acls/')).body.data.length, 6);
  t.is((await admin('/acls')).body.data.length, 6);
  const first = await admin('/acls?size=3');
  t.is(first.body.data.length, 3);
  const second = await admin(`/acls?size=3&offset=${encodeURIComponent(first.body.offset)}`);
  t.is(second.body.data.length, 3);
  t.notDeepEqual(first.body.data, second.body.data);
  t.is(second.body.offset, undefined, 'last page');
  t.is((await admin('/consumers/bob-the-buidler', { method: 'DELETE' })).status, 204);
});

test.serial(`POST /acls without a consumer: 400, with one: 201 (${SPEC}:429, :443)`, async (t) => {
  await truncate(admin);
  const missing = await admin('/acls', { method: 'POST', json: { group: 'test-group' } });
  t.is(missing.status, 400);
  t.is(missing.body.message, 'schema violation (consumer: required field missing)');
  const created = await admin('/acls', { method: 'POST', json: { group: 'test-group', consumer: { id: bob.id } } });
  t.is(created.status, 201);
  t.is(created.body.group, 'test-group');
});

test.serial(`PUT /acls/:id without a consumer: 400, with one: 200 (${SPEC}:468, :480)`, async (t) => {
  await truncate(admin);
  const missing = await admin(`/acls/${randomUUID()}`, { method: 'PUT', json: { group: 'test-group' } });
  t.is(missing.status, 400);
  t.is(missing.body.message, 'schema violation (consumer: required field missing)');
  const created = await admin(`/acls/${randomUUID()}`, { method: 'PUT', json: { group: 'test-group', consumer: { id: bob.id } } });
  t.is(created.status, 200);
  t.is(created.body.group, 'test-group');
});

test.serial(`GET /acls/:id/consumer retrieves the consumer of an ACL (${SPEC}:510)`, async (t) => {
  await truncate(admin);
  const acl = await insert(admin, bob.id, 'foo-group');
  const res = await admin(`/acls/${acl.id}/consumer`);
  t.is(res.status, 200);
  t.deepEqual(res.body, (await admin(`/consumers/${bob.id}`)).body);
});

test.serial('consumer + group is unique: a second one is 409, Kong\'s unique violation on the cache key (daos.lua cache_key)', async (t) => {
  await truncate(admin);
  await insert(admin, bob.id, 'dup');
  const again = await admin('/consumers/bob/acls', { method: 'POST', json: { group: 'dup' } });
  t.is(again.status, 409);
  t.deepEqual(again.body, {
    code: 5,
    name: 'unique constraint violation',
    message: `UNIQUE violation detected on '{consumer={id="${bob.id}"},group="dup"}'`,
    fields: { consumer: { id: bob.id }, group: 'dup' },
  });
  const other = await insert(admin, bob.id, 'other');
  const renamed = await admin(`/acls/${other.id}`, { method: 'PATCH', json: { group: 'dup' } });
  t.is(renamed.status, 409);
});

test.serial('/schemas/acls describes kong/plugins/acl/daos.lua\'s fields', async (t) => {
  const schema = await admin('/schemas/acls');
  t.is(schema.status, 200);
  const fields = Object.assign({}, ...(schema.body.fields as Array<Record<string, unknown>>)) as Record<string, Record<string, unknown>>;
  t.deepEqual(Object.keys(fields), ['id', 'created_at', 'consumer', 'group', 'tags']);
  t.like(fields.consumer, { type: 'foreign', reference: 'consumers', required: true, on_delete: 'cascade' });
  t.like(fields.group, { type: 'string', required: true });
});

test.serial('/schemas/plugins/acl answers kong/plugins/acl/schema.lua\'s config, and its entity checks refuse allow with deny, or neither', async (t) => {
  const schema = await admin('/schemas/plugins/acl');
  t.is(schema.status, 200);
  type Fields = Array<Record<string, Record<string, unknown>>>;
  const fields = Object.assign({}, ...(schema.body.fields as Fields)) as Record<string, { fields?: Fields }>;
  const config = Object.assign({}, ...(fields.config?.fields ?? [])) as Record<string, Record<string, unknown>>;
  t.deepEqual(Object.keys(config), ['allow', 'deny', 'hide_groups_header', 'always_use_authenticated_groups']);
  t.like(config.allow, { type: 'array', elements: { type: 'string' } });
  t.like(config.hide_groups_header, { type: 'boolean', required: true, default: false });
  t.like(config.always_use_authenticated_groups, { type: 'boolean', required: true, default: false });

  const both = await admin('/plugins', { method: 'POST', json: { name: 'acl', config: { allow: ['a'], deny: ['b'] } } });
  t.is(both.status, 400);
  t.deepEqual(both.body.fields, { '@entity': ["exactly one of these fields must be non-empty: 'config.allow', 'config.deny'"] });
  // neither given (an empty list is none: is_nonempty): both checks fail, and Kong reports both in
  // schema.lua's order (kong/db/schema/init.lua:592-605 at_least_one_of, :672-690 only_one_of)
  const onlyOne = "exactly one of these fields must be non-empty: 'config.allow', 'config.deny'";
  const atLeastOne = "at least one of these fields must be non-empty: 'config.allow', 'config.deny'";
  for (const config of [{}, { allow: [] }, { allow: [], deny: [] }]) {
    const neither = await admin('/plugins', { method: 'POST', json: { name: 'acl', config } });
    t.deepEqual([neither.status, neither.body], [400, {
      code: 2,
      name: 'schema violation',
      message: `2 schema violations (${onlyOne}; ${atLeastOne})`,
      fields: { '@entity': [onlyOne, atLeastOne] },
    }], JSON.stringify(config));
  }
  const consumerScoped = await admin('/plugins', { method: 'POST', json: { name: 'acl', consumer: { id: bob.id }, config: { allow: ['a'] } } });
  t.is(consumerScoped.status, 400, 'typedefs.no_consumer');

  const created = await admin('/plugins', { method: 'POST', json: { name: 'acl', config: { deny: ['blocked'] } } });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.deepEqual(created.body.config, { allow: null, deny: ['blocked'], hide_groups_header: false, always_use_authenticated_groups: false });
  // PATCHed to neither: the same two checks, at_least_one_of worded for an update (kong/db/schema/init.lua:2200-2220)
  const emptied = await admin(`/plugins/${created.body.id}`, { method: 'PATCH', json: { config: { deny: [] } } });
  t.deepEqual([emptied.status, emptied.body.fields], [400, { '@entity': [onlyOne, `when updating, ${atLeastOne}`] }]);
  t.is((await admin(`/plugins/${created.body.id}`, { method: 'DELETE' })).status, 204);
});
