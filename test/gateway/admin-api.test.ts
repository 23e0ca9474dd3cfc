import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { kongAdminProblems } from '../helpers/kong-admin-contract.ts';
import { startTestGateway, writeConfig } from '../helpers/gateway.ts';
import { readGatewaySettings } from '../../gateway/local/settings.ts';

// The Admin API subset, checked against Kong's official OpenAPI (OSS 3.9) and Kong's own
// behaviour (kong/api/endpoints.lua, kong/db/errors.lua): 201 on create, 204 on delete,
// {"message":"Not found"}, schema and unique violations with their codes.
let f: Fixture;

test.before(async () => {
  f = await startFixture('_format_version: "3.0"\n');
});
test.after.always(async () => {
  await f?.dispose();
});

test('GET / and GET /status describe the node', async (t) => {
  const root = await f.admin('/');
  t.is(root.status, 200);
  t.is(root.body.version, '3.9.3');
  t.truthy(root.body.plugins.available_on_server['animal-store-edge']);
  t.is(root.body.plugins.available_on_server['key-auth'].priority, 1250);
  t.deepEqual(kongAdminProblems('GET', '/', 200, root.body), []);
  const status = await f.admin('/status');
  t.is(status.body.database.reachable, true);
  // GET / presents DB mode: no configuration_hash, which Kong gives DB-less nodes and data
  // planes only (health.lua:47-56; 02-kong_routes_spec.lua:213-221)
  t.is(root.body.configuration.database, 'postgres');
  t.false('configuration_hash' in status.body);
  t.deepEqual(kongAdminProblems('GET', '/status', 200, status.body), []);
});

test.serial("GET /: enabled_in_cluster names each plugin as paging the plugins by id first meets it; configuration.log_level is the node's (kong.lua:83-96, 129)", async (t) => {
  await f.admin('/services', { method: 'POST', json: { name: 'plugin-order', url: 'http://example.test' } });
  for (const [id, name] of [
    ['00000000-0000-4000-8000-00000000000a', 'response-transformer'],
    ['00000000-0000-4000-8000-00000000000b', 'correlation-id'],
    ['00000000-0000-4000-8000-00000000000c', 'request-termination'],
  ] as const) {
    const created = await f.admin('/services/plugin-order/plugins', { method: 'POST', json: { id, name } });
    t.is(created.status, 201, JSON.stringify(created.body));
  }
  const plugins = (await f.admin('/plugins?size=1000')).body.data as Array<{ name: string }>;
  const root = await f.admin('/');
  t.deepEqual(root.body.plugins.enabled_in_cluster, [...new Set(plugins.map((plugin) => plugin.name))]);
  t.deepEqual(root.body.plugins.enabled_in_cluster.slice(0, 3), ['response-transformer', 'correlation-id', 'request-termination']);
  t.is(root.body.configuration.log_level, 'notice');
  t.is((await f.admin('/services/plugin-order', { method: 'DELETE' })).status, 204);
});

test('GET /endpoints lists every path the Admin API serves, keys named as Kong names them, in Kong\'s order (kong.lua:150-184; 02-kong_routes_spec.lua:169-192)', async (t) => {
  const response = await f.admin('/endpoints');
  t.is(response.status, 200);
  t.deepEqual(kongAdminProblems('GET', '/endpoints', 200, response.body), []);
  const data = response.body.data as string[];
  for (const path of ['/', '/plugins', '/plugins/schema/{name}', '/services/{services}/routes/{routes}', '/consumers/{consumers}/key-auth/{keyauth_credentials}', '/consumers/{consumers}/acls/{acls}', '/basic-auths/{basicauth_credentials}', '/schemas/{db_entity_name}/validate', '/tags/{tags}', '/endpoints', '/timers', '/status', '/metrics']) {
    t.true(data.includes(path), path);
  }
  t.is(new Set(data).size, data.length, 'each path once');
  // known difference: Kong's paths this Admin API does not serve (404 here) are not listed
  for (const path of ['/config', '/cache', '/upstreams/{upstreams}/targets', '/debug/node/log-level', '/status/dns']) t.false(data.includes(path), path);
  // "/" sorts below every other byte: a path's children come before a longer sibling
  t.true(data.indexOf('/key-auths/{keyauth_credentials}/consumer') < data.indexOf('/key-sets'));
  t.true(data.indexOf('/plugins/enabled') < data.indexOf('/plugins/{plugins}'));
  // each path without a key is served: none answers a GET with the Not found of an unknown path
  for (const path of data.filter((p) => !p.includes('{'))) t.notDeepEqual((await f.admin(path)).body, { message: 'Not found' }, path);
});

test("GET /plugins/schema/{name}: the plugin's config schema, fields and entity_checks; 404 for a plugin not loaded (kong/api/routes/plugins.lua:122-137)", async (t) => {
  const response = await f.admin('/plugins/schema/rate-limiting');
  t.is(response.status, 200);
  const subschema = await f.admin('/schemas/plugins/rate-limiting');
  const config = (subschema.body.fields as Array<Record<string, { fields: unknown }>>).find((field) => field.config)!.config;
  t.deepEqual(response.body, { entity_checks: [], fields: config?.fields });
  t.true(JSON.stringify(response.body.fields).includes('"minute"'));
  const missing = await f.admin('/plugins/schema/telepathy');
  t.deepEqual([missing.status, missing.body], [404, { message: "No plugin named 'telepathy'" }]);
});

test('GET /timers: the answering worker and its timer statistics in Kong\'s shape; the Admin API process runs no timers (kong.lua:258-272; 20-timers_spec.lua:28-53)', async (t) => {
  const response = await f.admin('/timers');
  t.is(response.status, 200);
  t.deepEqual(kongAdminProblems('GET', '/timers', 200, response.body), []);
  t.deepEqual(response.body, {
    worker: { id: 0, count: 1 },
    stats: { flamegraph: { running: '', pending: '', elapsed_time: '' }, sys: { total: 0, runs: 0, running: 0, pending: 0, waiting: 0 }, timers: {} },
  });
  // the worker GET / lists
  t.deepEqual((await f.admin('/')).body.pids.workers.length, response.body.worker.count);
});

test('consumers: create, read by id or username, update, replace, delete', async (t) => {
  const created = await f.admin('/consumers', { method: 'POST', json: { username: 'ann', custom_id: 'ext-1', tags: ['t1'] } });
  t.is(created.status, 201);
  t.deepEqual(kongAdminProblems('POST', '/consumers', 201, created.body), []);
  t.like(created.body, { username: 'ann', custom_id: 'ext-1', tags: ['t1'] });
  const byId = await f.admin(`/consumers/${created.body.id}`);
  t.deepEqual(byId.body, created.body);
  t.deepEqual(kongAdminProblems('GET', '/consumers/{consumer_username_or_id}', 200, byId.body), []);
  const patched = await f.admin('/consumers/ann', { method: 'PATCH', json: { custom_id: 'ext-2' } });
  t.is(patched.status, 200);
  t.is(patched.body.custom_id, 'ext-2');
  t.is(patched.body.username, 'ann');
  const put = await f.admin('/consumers/ann', { method: 'PUT', json: { tags: ['t2'] } });
  t.is(put.status, 200);
  t.is(put.body.id, created.body.id);
  t.is(put.body.custom_id, null, 'PUT replaces the entity');
  t.is((await f.admin('/consumers/ann', { method: 'DELETE' })).status, 204);
  const gone = await f.admin('/consumers/ann');
  t.is(gone.status, 404);
  t.deepEqual(gone.body, { message: 'Not found' });
  t.is((await f.admin('/consumers/ann', { method: 'DELETE' })).status, 204, 'deleting what does not exist is a 204');
});

test('consumers: Kong error bodies', async (t) => {
  const neither = await f.admin('/consumers', { method: 'POST', json: { tags: ['x'] } });
  t.is(neither.status, 400);
  t.like(neither.body, { code: 2, name: 'schema violation', message: "schema violation (at least one of these fields must be non-empty: 'custom_id', 'username')" });
  // a PATCH is validated by validate_update, which words that check for an update (kong/db/schema/init.lua:2200-2220)
  const patched = await f.admin('/consumers', { method: 'POST', json: { username: 'patched-away' } });
  const unnamed = await f.admin(`/consumers/${patched.body.id}`, { method: 'PATCH', json: { username: null } });
  t.is(unnamed.status, 400);
  t.like(unnamed.body, {
    code: 2,
    name: 'schema violation',
    message: "schema violation (when updating, at least one of these fields must be non-empty: 'custom_id', 'username')",
  });
  await f.admin('/consumers', { method: 'POST', json: { username: 'dup' } });
  const duplicate = await f.admin('/consumers', { method: 'POST', json: { username: 'dup' } });
  t.is(duplicate.status, 409);
  t.deepEqual(duplicate.body, { code: 5, name: 'unique constraint violation', message: `UNIQUE violation detected on '{username="dup"}'`, fields: { username: 'dup' } });
  const badType = await f.admin('/consumers', { method: 'POST', json: { username: 5 } });
  t.is(badType.status, 400);
  t.deepEqual(badType.body.fields, { username: 'expected a string' });
  t.is((await f.admin('/consumers', { method: 'DELETE' })).status, 405);
});

// Writes that arrive together are decided one at a time, as Kong's database decides them:
// one name, one 201 (kong/db/errors.lua:366, Kong 3.9.3); PUTs of one name, one entity; a route
// and its service's delete, either the route (the delete refused, errors.lua:310) or the delete
// (the route refused, errors.lua:292), never a route left without its service.
test('writes at once: one name is one 201, PUTs one entity, a route never outlives its service', async (t) => {
  const posts = await Promise.all(Array.from({ length: 8 }, () => f.admin('/consumers', { method: 'POST', json: { username: 'racer' } })));
  t.deepEqual(posts.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
  for (const refused of posts.filter((r) => r.status === 409)) t.is(refused.body.message, `UNIQUE violation detected on '{username="racer"}'`);

  const puts = await Promise.all(Array.from({ length: 8 }, (_, i) => f.admin('/consumers/upserted', { method: 'PUT', json: { custom_id: `put-${i}` } })));
  t.deepEqual([...new Set(puts.map((r) => r.status))], [200]);
  t.is(new Set(puts.map((r) => r.body.id)).size, 1);
  const stored = (await f.admin('/consumers/upserted')).body;
  t.true(puts.some((r) => r.body.custom_id === stored.custom_id));

  // the delete and six route writes at once; then again with a route in place before them
  for (const routeBefore of [false, true]) {
    const name = `doomed-${routeBefore}`;
    const service = (await f.admin('/services', { method: 'POST', json: { name, url: f.upstream.url } })).body;
    const route = (i: number) =>
      i % 2
        ? f.admin(`/services/${name}/routes`, { method: 'POST', json: { name: `${name}-r${i}`, paths: [`/${name}/r${i}`] } })
        : f.admin('/routes', { method: 'POST', json: { name: `${name}-r${i}`, paths: [`/${name}/r${i}`], service: { id: service.id } } });
    if (routeBefore) t.is((await route(6)).status, 201);
    const [deleted, ...routes] = await Promise.all([f.admin(`/services/${service.id}`, { method: 'DELETE' }), ...Array.from({ length: 6 }, (_, i) => route(i))]);
    const statuses = [deleted.status, ...routes.map((r) => r.status)];
    t.true(statuses.every((status) => [201, 204, 400, 404].includes(status)), JSON.stringify(statuses));
    const left = ((await f.admin('/routes?size=1000')).body.data as Array<{ name: string | null; service: { id: string } }>).filter((r) => r.name?.startsWith(`${name}-`));
    t.is(left.length, routes.filter((r) => r.status === 201).length + (routeBefore ? 1 : 0));
    if (deleted.status === 204) {
      t.false(routeBefore);
      t.is((await f.admin(`/services/${service.id}`)).status, 404);
      t.is(left.length, 0);
    } else {
      t.is(deleted.body.message, "an existing 'routes' entity references this 'services' entity");
      t.true(left.length > 0 && left.every((r) => r.service.id === service.id));
    }
  }
});

test('null elements of arrays, sets and map values are 400, never stored, fields as cjson writes them (Kong: validate_elements; 09-routes_routes_spec.lua:368)', async (t) => {
  // kong/db/schema/init.lua: validate_elements sets `field.elements.required = true`, the map
  // branch `field.values.required = true`, so `[null]` is "required field missing".
  const cases: Array<[string, unknown, unknown]> = [
    ['/routes', { name: 'nil-host', hosts: [null], paths: ['/h'] }, { hosts: ['required field missing'] }],
    ['/routes', { name: 'nil-path', paths: ['/p', null] }, { paths: [null, 'required field missing'] }],
    ['/routes', { name: 'nil-header', paths: ['/m'], headers: { 'x-a': [null] } }, { headers: { 'x-a': ['required field missing'] } }],
    ['/consumers', { username: 'nil-tag', tags: [null] }, { tags: ['required field missing'] }],
  ];
  for (const [path, json, fields] of cases) {
    const response = await f.admin(path, { method: 'POST', json });
    t.is(response.status, 400, JSON.stringify(json));
    t.deepEqual(response.body.fields, fields);
  }
  for (const name of ['nil-host', 'nil-path', 'nil-header']) t.is((await f.admin(`/routes/${name}`)).status, 404, name);
  t.is((await f.admin('/consumers/nil-tag')).status, 404);
});

test('empty strings are 400 unless the field allows them (Kong: len_min defaults to 1)', async (t) => {
  // kong/db/schema/init.lua validate_field: "empty strings are not accepted by default" (a string
  // field without len_min gets len_min = 1); rate-limiting's policy declares len_min = 0.
  await f.admin('/consumers', { method: 'POST', json: { username: 'empty-eve' } });
  const emptyKey = await f.admin('/consumers/empty-eve/key-auth', { method: 'POST', json: { key: '' } });
  t.is(emptyKey.status, 400);
  t.deepEqual(emptyKey.body.fields, { key: 'length must be at least 1' });
  const emptyHost = await f.admin('/routes', { method: 'POST', json: { hosts: [''] } });
  t.deepEqual(emptyHost.body.fields, { hosts: ['length must be at least 1'] });
  t.is((await f.admin('/consumers/empty-eve/key-auth')).body.data.length, 0);
});

test('a route cannot match on the Host header: that is what hosts is for (Kong: routes.lua)', async (t) => {
  // kong/db/schema/entities/routes.lua (3.9.3): headers' keys match_none ^[Hh][Oo][Ss][Tt]$.
  const refused = await f.admin('/routes', { method: 'POST', json: { headers: { Host: ['example.com'] } } });
  t.is(refused.status, 400);
  t.deepEqual(refused.body.fields, { headers: "cannot contain 'host' header, which must be specified in the 'hosts' attribute" });
});

test('consumers: size/offset pagination and tag filters', async (t) => {
  for (let i = 0; i < 5; i++) await f.admin('/consumers', { method: 'POST', json: { username: `page-${i}`, tags: ['paged', i % 2 ? 'odd' : 'even'] } });
  const seen: string[] = [];
  let next: string | null = '/consumers?tags=paged&size=2';
  let pages = 0;
  while (next) {
    const page = await f.admin(next);
    t.deepEqual(kongAdminProblems('GET', '/consumers', 200, page.body), []);
    t.true(page.body.data.length <= 2);
    seen.push(...page.body.data.map((c: { username: string }) => c.username));
    next = page.body.next;
    pages += 1;
  }
  t.is(pages, 3);
  t.deepEqual(seen.sort(), ['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
  t.is((await f.admin('/consumers?tags=paged,odd')).body.data.length, 2);
  t.is((await f.admin('/consumers?tags=odd/even')).body.data.length, 5);
  const badSize = await f.admin('/consumers?size=0');
  t.is(badSize.status, 400);
  t.is(badSize.body.message, 'size must be an integer between 1 and 1000');
});

test('an offset that is not one: base64 first, then JSON (kong/db/strategies/postgres/init.lua:484-493)', async (t) => {
  const cases: [string, string][] = [
    ['%25%25%25', "'%%%' is not a valid offset: bad base64 encoding"],
    ['abcde', "'abcde' is not a valid offset: bad base64 encoding"], // 4n+1 digits
    ['Zm9vYmFy', "'Zm9vYmFy' is not a valid offset: bad json encoding"], // "foobar"
    ['eyJhIjoxfQ%3D%3D', "'eyJhIjoxfQ==' is not a valid offset: bad json encoding"], // {"a":1}
  ];
  for (const [offset, message] of cases) {
    const refused = await f.admin(`/consumers?offset=${offset}`);
    t.is(refused.status, 400, offset);
    t.like(refused.body, { code: 7, name: 'invalid offset', message }, offset);
  }
});

test('key-auth credentials: generated keys, explicit keys, uniqueness, ttl', async (t) => {
  await f.admin('/consumers', { method: 'POST', json: { username: 'kim' } });
  const generated = await f.admin('/consumers/kim/key-auth', { method: 'POST', json: {} });
  t.is(generated.status, 201);
  t.regex(generated.body.key, /^[0-9a-f]{32}$/);
  const explicit = await f.admin('/consumers/kim/key-auth', { method: 'POST', json: { key: 'kim-key', ttl: 3600 } });
  t.is(explicit.body.ttl, 3600);
  const clash = await f.admin('/consumers/kim/key-auth', { method: 'POST', json: { key: 'kim-key' } });
  t.is(clash.status, 409);
  t.is(clash.body.name, 'unique constraint violation');
  const list = await f.admin('/consumers/kim/key-auth');
  t.is(list.body.data.length, 2);
  await f.gateway.clock.advance(3_600_000);
  t.is((await f.admin('/consumers/kim/key-auth')).body.data.length, 1, 'expired credentials are not listed');
  t.is((await f.admin('/consumers/nobody/key-auth', { method: 'POST', json: {} })).status, 404);
});

test('plugins: create on a consumer, validate config, patch, list, delete', async (t) => {
  const consumer = await f.admin('/consumers', { method: 'POST', json: { username: 'pat' } });
  const created = await f.admin('/consumers/pat/plugins', { method: 'POST', json: { name: 'rate-limiting', config: { minute: 5 }, tags: ['plan:free'] } });
  t.is(created.status, 201);
  t.deepEqual(kongAdminProblems('POST', '/consumers/{consumer_username_or_id}/plugins', 201, created.body), []);
  t.deepEqual(created.body.consumer, { id: consumer.body.id });
  t.is(created.body.config.policy, 'local', 'defaults are filled in');
  t.is(created.body.config.limit_by, 'consumer');
  const invalid = await f.admin('/consumers/pat/plugins', { method: 'POST', json: { name: 'rate-limiting', config: { minute: 'many' } } });
  t.is(invalid.status, 400);
  t.deepEqual(invalid.body.fields, { config: { minute: 'expected a number' } });
  const twice = await f.admin('/consumers/pat/plugins', { method: 'POST', json: { name: 'rate-limiting', config: { minute: 7 } } });
  t.is(twice.status, 409);
  const unsupported = await f.admin('/consumers/pat/plugins', { method: 'POST', json: { name: 'key-auth' } });
  t.is(unsupported.status, 400);
  t.deepEqual(unsupported.body.fields, { consumer: 'value must be null' });
  const patched = await f.admin(`/consumers/pat/plugins/${created.body.id}`, { method: 'PATCH', json: { config: { day: 100 } } });
  t.is(patched.body.config.minute, 5);
  t.is(patched.body.config.day, 100);
  const all = await f.admin('/plugins?tags=plan:free');
  t.deepEqual(kongAdminProblems('GET', '/plugins', 200, all.body), []);
  t.is(all.body.data.length, 1);
  t.is((await f.admin(`/plugins/${created.body.id}`, { method: 'DELETE' })).status, 204);
  t.is((await f.admin(`/plugins/${created.body.id}`)).status, 404);
});

test('deleting a consumer deletes its credentials and plugins (on_delete cascade)', async (t) => {
  await f.admin('/consumers', { method: 'POST', json: { username: 'gone' } });
  const key = await f.admin('/consumers/gone/key-auth', { method: 'POST', json: {} });
  const plugin = await f.admin('/consumers/gone/plugins', { method: 'POST', json: { name: 'rate-limiting', config: { minute: 1 } } });
  await f.admin('/consumers/gone', { method: 'DELETE' });
  t.is((await f.admin(`/key-auths/${key.body.id}`)).status, 404);
  t.is((await f.admin(`/plugins/${plugin.body.id}`)).status, 404);
});

test('the Admin API refuses a non-loopback address unless forced', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'admin-bind-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const error = await t.throwsAsync(() => startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir, adminHost: '0.0.0.0' }));
  t.regex(error.message, /refusing to bind the Admin API to 0.0.0.0/);
});

test("KONG_NODE_ID is GET /'s node_id and the node's, and KONG_LOG_LEVEL its configuration.log_level; not a UUID refuses to start (02-kong_routes_spec.lua:703-730, conf_loader/parse.lua:867-869)", async (t) => {
  t.throws(() => readGatewaySettings({ KONG_NODE_ID: 'not-a-uuid' }), { message: 'KONG_NODE_ID must be a valid UUID, got "not-a-uuid"' });
  const nodeId = '8a2a1c3e-5b7d-4f0e-9c1a-2b3c4d5e6f70';
  const settings = readGatewaySettings({ KONG_NODE_ID: nodeId.toUpperCase(), KONG_LOG_LEVEL: 'info' });
  t.is(settings.nodeId, nodeId.toUpperCase());
  const dir = mkdtempSync(join(tmpdir(), 'node-id-'));
  const gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir, nodeId, node: { logLevel: settings.node!.logLevel } });
  t.teardown(async () => {
    await gateway.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const root = (await (await fetch(`${gateway.adminUrl}/`)).json()) as { node_id: string; configuration: { log_level: string } };
  t.is(root.node_id, nodeId);
  t.is(root.configuration.log_level, 'info');
  const metrics = await (await fetch(`${gateway.adminUrl}/metrics`)).text();
  t.regex(metrics, new RegExp(`node_id="${nodeId}"`));
});

test('a UUID in the URL is looked up by id only, never by username or name (kong/api/endpoints.lua)', async (t) => {
  const uuidName = '0b5c3c1e-7f3a-4a7e-9d55-2f1d3c4b5a69';
  const created = await f.admin('/consumers', { method: 'POST', json: { username: uuidName } });
  t.is(created.status, 201);
  t.is((await f.admin(`/consumers/${uuidName}`)).status, 404, 'Kong selects { id = <uuid> }, which no consumer has');
  t.is((await f.admin(`/consumers/${created.body.id}`)).body.username, uuidName);
  const service = await f.admin('/services', { method: 'POST', json: { name: uuidName, url: 'http://127.0.0.1:9' } });
  t.is(service.status, 201);
  t.is((await f.admin(`/services/${uuidName}`)).status, 404);
  t.is((await f.admin(`/services/${service.body.id}`)).body.name, uuidName);
});

test('hosts are checked as Kong checks them (kong/tools/ip.lua, kong/db/schema/typedefs.lua)', async (t) => {
  const service = await f.admin('/services', { method: 'POST', json: { name: 'hosts-check', url: 'http://127.0.0.1:9' } });
  t.is(service.status, 201);
  const route = (hosts: string[]) => f.admin('/services/hosts-check/routes', { method: 'POST', json: { hosts } });
  for (const [host, message] of [
    ['a..b', 'invalid hostname: a..b'],
    ['bad-.example', 'invalid hostname: bad-.example'],
    ['a.*.b', 'invalid wildcard: must be placed at leftmost or rightmost label'],
    ['*.a.*', 'invalid wildcard: must have at most one wildcard'],
    ['300.1.1.1', 'invalid ipv4 address: 300.1.1.1'],
    ['example.com:70000', 'invalid port number'],
  ] as const) {
    const refused = await route([host]);
    t.is(refused.status, 400, host);
    t.true(JSON.stringify(refused.body.fields).includes(message), `${host}: ${JSON.stringify(refused.body.fields)}`);
  }
  t.is((await route(['*.example.com', 'api.example.*', 'example.com:8000', '10.0.0.1', 'example.com.'])).status, 201);
  const withPort = await f.admin('/services', { method: 'POST', json: { name: 'port-in-host', host: 'example.com:80' } });
  t.is(withPort.status, 400);
  t.regex(JSON.stringify(withPort.body.fields), /must not have a port/);
  const badIp = await f.admin('/services', { method: 'POST', json: { name: 'bad-ip', host: '999.1.1.1' } });
  t.is(badIp.status, 400);
  t.regex(JSON.stringify(badIp.body.fields), /invalid value: 999\.1\.1\.1/);
});
