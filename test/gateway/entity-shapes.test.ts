import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { kongAdminProblems } from '../helpers/kong-admin-contract.ts';
import { startEchoUpstream, startEmptyGateway, startTestGateway, type TestGateway } from '../helpers/gateway.ts';

// Entities come back as Kong 3.9 returns them: every field of the entity's schema, unset ones as
// null (kong/api/endpoints.lua passes nulls = true), and conform to Kong's Admin API OpenAPI.
// Field lists: Kong 3.9.3 kong/db/schema/entities/{services,routes,consumers,plugins}.lua (routes
// without the expressions flavor's `expression`/`priority`) and kong/plugins/key-auth/daos.lua,
// plus `ttl`, which the PostgreSQL strategy selects for ttl-enabled DAOs (kong/db/strategies/postgres).
const KONG_FIELDS = {
  services: ['id', 'created_at', 'updated_at', 'name', 'retries', 'protocol', 'host', 'port', 'path', 'connect_timeout', 'write_timeout', 'read_timeout', 'tags', 'client_certificate', 'tls_verify', 'tls_verify_depth', 'ca_certificates', 'enabled'],
  routes: ['id', 'created_at', 'updated_at', 'name', 'protocols', 'https_redirect_status_code', 'strip_path', 'preserve_host', 'request_buffering', 'response_buffering', 'tags', 'service', 'snis', 'sources', 'destinations', 'methods', 'hosts', 'paths', 'headers', 'regex_priority', 'path_handling'],
  consumers: ['id', 'created_at', 'updated_at', 'username', 'custom_id', 'tags'],
  plugins: ['id', 'name', 'instance_name', 'created_at', 'updated_at', 'route', 'service', 'consumer', 'config', 'protocols', 'enabled', 'tags'],
  keyauth_credentials: ['id', 'created_at', 'consumer', 'key', 'tags', 'ttl'],
};
const sorted = (list: string[]) => [...list].sort();

type AdminCall = (path: string, init?: RequestInit & { json?: unknown }) => ReturnType<typeof request>;
let gateway: TestGateway;
let admin: AdminCall;

test.before(async () => {
  gateway = await startEmptyGateway();
  admin = (path, init = {}) => request(`${gateway.adminUrl}${path}`, init);
});
test.after.always(async () => {
  await gateway?.dispose();
});

test.serial('services, routes, consumers, plugins and key-auths carry every Kong field, unset ones null', async (t) => {
  const service = await admin('/services', { method: 'POST', json: { name: 'shape-service', url: 'http://127.0.0.1:9/base' } });
  t.is(service.status, 201, JSON.stringify(service.body));
  t.deepEqual(kongAdminProblems('POST', '/services', 201, service.body), []);
  t.deepEqual(sorted(Object.keys(service.body)), sorted(KONG_FIELDS.services));
  t.like(service.body, { protocol: 'http', host: '127.0.0.1', port: 9, path: '/base', tags: null, client_certificate: null, tls_verify: null, ca_certificates: null });

  const route = await admin('/services/shape-service/routes', { method: 'POST', json: { name: 'shape-route', paths: ['/shape'] } });
  t.is(route.status, 201, JSON.stringify(route.body));
  t.deepEqual(kongAdminProblems('POST', '/services/{service_id_or_name}/routes', 201, route.body), []);
  t.deepEqual(sorted(Object.keys(route.body)), sorted(KONG_FIELDS.routes));
  t.like(route.body, {
    methods: null,
    hosts: null,
    headers: null,
    snis: null,
    sources: null,
    destinations: null,
    service: { id: service.body.id },
  });

  const consumer = await admin('/consumers', { method: 'POST', json: { username: 'shape-consumer' } });
  t.deepEqual(sorted(Object.keys(consumer.body)), sorted(KONG_FIELDS.consumers));
  t.is(consumer.body.custom_id, null);

  const plugin = await admin('/routes/shape-route/plugins', { method: 'POST', json: { name: 'request-termination' } });
  t.is(plugin.status, 201, JSON.stringify(plugin.body));
  t.deepEqual(kongAdminProblems('POST', '/routes/{route_id_or_name}/plugins', 201, plugin.body), []);
  t.deepEqual(sorted(Object.keys(plugin.body)), sorted(KONG_FIELDS.plugins));
  t.like(plugin.body, { instance_name: null, consumer: null, service: null, route: { id: route.body.id } });

  const key = await admin('/consumers/shape-consumer/key-auth', { method: 'POST', json: {} });
  t.deepEqual(sorted(Object.keys(key.body)), sorted(KONG_FIELDS.keyauth_credentials));
  t.is(key.body.ttl, null, 'a key without ttl reads ttl: null, as Kong answers');
  const listed = await admin('/key-auths');
  t.is(listed.body.data[0].ttl, null);

  for (const [path, template] of [
    ['/services', '/services'],
    ['/routes', '/routes'],
    ['/plugins', '/plugins'],
    ['/consumers', '/consumers'],
    ['/services/shape-service', '/services/{service_id_or_name}'],
    ['/routes/shape-route', '/routes/{route_id_or_name}'],
    [`/plugins/${plugin.body.id}`, '/plugins/{plugin_id}'],
  ] as const) {
    const response = await admin(path);
    t.deepEqual(kongAdminProblems('GET', template, response.status, response.body), [], path);
  }
});

test('a service or route write takes effect on the proxy at once and survives a restart', async (t) => {
  // No declarative file (KONG_DECLARATIVE_CONFIG=''): Kong in DB mode, configured only through
  // the Admin API. (With a file, its built-in load owns what carries its select tags.)
  const dir = mkdtempSync(join(tmpdir(), 'restart-'));
  const echo = await startEchoUpstream();
  const first = await startTestGateway({ configFile: '', dir });
  let restarted: TestGateway | undefined;
  try {
    const admin = (path: string, init: RequestInit & { json?: unknown } = {}) => request(`${first.adminUrl}${path}`, init);
    await admin('/services/live', { method: 'PUT', json: { url: `${echo.url}/up` } });
    const put = await admin('/services/live/routes/live-route', { method: 'PUT', json: { paths: ['/live'] } });
    t.is(put.status, 200, JSON.stringify(put.body));
    t.is((await request(`${first.proxyUrl}/live/x`)).status, 200);
    t.is(echo.last()?.url, '/up/x');
    const patched = await admin('/routes/live-route', { method: 'PATCH', json: { paths: ['/moved'] } });
    t.deepEqual(patched.body.paths, ['/moved']);
    t.is((await request(`${first.proxyUrl}/live/x`)).status, 404);
    t.is((await request(`${first.proxyUrl}/moved/y`)).status, 200);
    await first.close();

    restarted = await startTestGateway({ configFile: '', dir });
    t.deepEqual((await request(`${restarted.adminUrl}/routes/live-route`)).body.paths, ['/moved']);
    t.is((await request(`${restarted.proxyUrl}/moved/z`)).status, 200);
  } finally {
    await restarted?.close();
    await echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('what the gateway cannot run is refused with 400 naming it, and nothing is stored', async (t) => {
  const tls = await admin('/services', { method: 'POST', json: { name: 'tls-service', url: 'http://127.0.0.1:9', tls_verify: true } });
  t.is(tls.status, 400);
  t.regex(tls.body.message, /tls_verify/);
  t.is((await admin('/services/tls-service')).status, 404);
  const badRegex = await admin('/routes', { method: 'POST', json: { name: 'bad-regex', paths: ['~/(?<'] } });
  t.is(badRegex.status, 400);
  t.regex(JSON.stringify(badRegex.body.fields), /paths/);
  t.is((await admin('/routes/bad-regex')).status, 404);
  const upstream = await admin('/upstreams', { method: 'POST', json: { name: 'x' } });
  t.is(upstream.status, 400);
  t.regex(upstream.body.message, /upstreams/);
  const unknownField = await admin('/services', { method: 'POST', json: { name: 'x', url: 'http://127.0.0.1:9', colour: 'blue' } });
  t.is(unknownField.status, 400);
  t.regex(unknownField.body.message, /colour: unknown field/);
});

test('deleting a service that routes use is a foreign key violation (kong/db/errors.lua)', async (t) => {
  await admin('/services/fk-service', { method: 'PUT', json: { url: 'http://127.0.0.1:9' } });
  await admin('/services/fk-service/routes', { method: 'POST', json: { name: 'fk-route', paths: ['/fk'] } });
  const refused = await admin('/services/fk-service', { method: 'DELETE' });
  t.is(refused.status, 400);
  t.is(refused.body.name, 'foreign key violation');
  t.is((await admin('/routes/fk-route', { method: 'DELETE' })).status, 204);
  t.is((await admin('/services/fk-service', { method: 'DELETE' })).status, 204);
});

test('list endpoints of every entity type decK reads: empty, or 404 where Kong OSS 3.9 has none', async (t) => {
  for (const path of ['/certificates', '/ca_certificates', '/snis', '/upstreams', '/vaults', '/keys', '/key-sets', '/basic-auths', '/hmac-auths', '/jwts', '/acls', '/oauth2']) {
    const list = await admin(path);
    t.is(list.status, 200, path);
    t.deepEqual(list.body, { data: [], next: null }, path);
  }
  // Kong Enterprise entities: not routes of Kong OSS 3.9.
  for (const path of ['/consumer_groups', '/partials', '/mtls-auths', '/licenses', '/rbac/roles']) {
    t.is((await admin(path)).status, 404, path);
  }
  // kong/api/routes/filter_chains.lua with wasm off, Kong's default
  t.deepEqual(await admin('/filter-chains').then((r) => [r.status, r.body.message]), [400, 'this endpoint is only available when wasm is enabled']);
});

test('schemas and validate endpoints answer in Kong format (kong/api/routes/kong.lua)', async (t) => {
  const services = await admin('/schemas/services');
  t.is(services.status, 200);
  const fields = (services.body.fields as Array<Record<string, { default?: unknown; type: string }>>).map((f) => Object.keys(f)[0]);
  t.deepEqual(sorted(fields as string[]), sorted(KONG_FIELDS.services));
  const rateLimiting = await admin('/schemas/plugins/rate-limiting');
  type RecordFields = Array<Record<string, { fields: Array<Record<string, { required?: boolean }>> }>>;
  const config = (rateLimiting.body.fields as RecordFields).find((f) => f.config)!.config!;
  t.true(config.fields.find((f) => f.redis)!.redis!.required, 'records are required (kong/db/schema/entity.lua make_records_required)');
  t.deepEqual((await admin('/schemas/plugins/nope')).body, { message: "No plugin named 'nope'" });
  t.deepEqual((await admin('/schemas/nope')).body, { message: "No entity named 'nope'" });
  const valid = await admin('/schemas/plugins/validate', { method: 'POST', json: { name: 'rate-limiting', config: { minute: 5 } } });
  t.deepEqual([valid.status, valid.body], [200, { message: 'schema validation successful' }]);
  const invalid = await admin('/schemas/routes/validate', { method: 'POST', json: { protocols: ['ftp'] } });
  t.is(invalid.status, 400);
  t.is(invalid.body.name, 'schema violation');
  t.is((await admin('/consumers')).body.data.some((c: { username: string }) => c.username === 'x'), false);
});

test('an Admin API body over Kong’s 10m limit answers 413 in Kong’s error shape', async (t) => {
  const huge = await admin('/consumers', { method: 'POST', json: { username: 'x'.repeat(11 * 1024 * 1024) } });
  t.is(huge.status, 413);
  t.deepEqual(huge.body, { message: 'Payload too large' });
});

test('an Admin API body that is not UTF-8 is refused whole, never stored with U+FFFD in its place', async (t) => {
  const invalid = Buffer.concat([Buffer.from('{"username":"bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
  const json = await admin('/consumers', { method: 'POST', headers: { 'content-type': 'application/json' }, body: invalid });
  t.deepEqual([json.status, json.body], [400, { message: 'Cannot parse JSON body' }]);
  const form = Buffer.concat([Buffer.from('username=bad-'), Buffer.from([0xc3, 0x28])]);
  const formed = await admin('/consumers', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  t.deepEqual([formed.status, formed.body], [400, { message: 'Cannot parse JSON body' }]);
  t.false((await admin('/consumers')).body.data.some((c: { username: string }) => c.username.startsWith('bad-')), 'nothing stored');
  // UTF-8 itself, multi-byte characters included, goes through untouched
  const fine = await admin('/consumers', { method: 'POST', json: { username: 'zoë-🐈' } });
  t.is(fine.status, 201, JSON.stringify(fine.body));
  t.is(fine.body.username, 'zoë-🐈');
  const formFine = await admin('/consumers', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=m%C3%BCller&tags[]=a' });
  t.like(formFine.body, { username: 'müller', tags: ['a'] });
});

test('key-auth credentials by id and by key, nested and top level; PUT upserts by key', async (t) => {
  await admin('/consumers/keyed', { method: 'PUT', json: {} });
  const put = await admin('/consumers/keyed/key-auth/ask_put_key', { method: 'PUT', json: { tags: ['a'] } });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.is(put.body.key, 'ask_put_key');
  const again = await admin('/consumers/keyed/key-auth/ask_put_key', { method: 'PUT', json: { tags: ['b'] } });
  t.is(again.body.id, put.body.id, 'the same credential, replaced');
  t.deepEqual((await admin(`/key-auths/${put.body.id}`)).body.tags, ['b']);
  const patched = await admin('/key-auths/ask_put_key', { method: 'PATCH', json: { ttl: 60 } });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  t.is(patched.body.ttl, 60);
  t.is((await admin('/key-auths/ask_put_key', { method: 'DELETE' })).status, 204);
  t.is((await admin(`/key-auths/${put.body.id}`)).status, 404);
});

test('plugins by id or instance_name (endpoint_key); PUT by instance_name creates it', async (t) => {
  const put = await admin('/plugins/edge-id', { method: 'PUT', json: { name: 'correlation-id' } });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.is(put.body.instance_name, 'edge-id');
  t.is((await admin('/plugins/edge-id')).body.id, put.body.id);
  // A second PUT replaces the plugin under the same instance_name (kong/db/dao/init.lua upsert_by_<key>).
  const again = await admin('/plugins/edge-id', { method: 'PUT', json: { name: 'correlation-id', config: { header_name: 'X-Again' } } });
  t.like(again.body, { id: put.body.id, instance_name: 'edge-id', config: { header_name: 'X-Again' } });
  const patched = await admin('/plugins/edge-id', { method: 'PATCH', json: { config: { header_name: 'X-Trace' } } });
  t.is(patched.body.config.header_name, 'X-Trace');
  t.is((await admin('/plugins/edge-id', { method: 'DELETE' })).status, 204);
  t.is((await admin(`/plugins/${put.body.id}`)).status, 404);
});
