import test from 'ava';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { kongAdminProblems } from '../helpers/kong-admin-contract.ts';

// What go-kong (the client of decK and the Kong Ingress Controller) found the local Admin API
// doing otherwise than Kong 3.9 (issue 23), each case as Kong's source decides it.
let f: Fixture;

test.before(async () => {
  f = await startFixture('_format_version: "3.0"\n');
});
test.after.always(async () => {
  await f?.dispose();
});

test("GET /routes/{route}/service is the route's service (kong/api/endpoints.lua generate_entity_endpoints)", async (t) => {
  const service = await f.admin('/services', { method: 'POST', json: { name: 'fk-owner', url: 'http://127.0.0.1:9' } });
  const route = await f.admin('/services/fk-owner/routes', { method: 'POST', json: { name: 'fk-child', paths: ['/fk-child'] } });
  const read = await f.admin('/routes/fk-child/service');
  t.is(read.status, 200);
  t.deepEqual(read.body, service.body);
  // Kong's OpenAPI does not list this endpoint: the body is a service, as GET /services/{service} answers it.
  t.deepEqual(kongAdminProblems('GET', '/services/{service_id_or_name}', 200, read.body), []);
  // PATCH through the route writes the service; DELETE through it is not allowed (method_not_allowed).
  const patched = await f.admin(`/routes/${route.body.id}/service`, { method: 'PATCH', json: { retries: 2 } });
  t.is(patched.body.retries, 2);
  t.is((await f.admin('/routes/fk-child/service', { method: 'DELETE' })).status, 405);
  // A route without a service has none to show (get_entity_endpoint: `not pk or pk == null`)...
  await f.admin('/routes', { method: 'POST', json: { name: 'fk-orphan', paths: ['/orphan'] } });
  t.is((await f.admin('/routes/fk-orphan/service')).status, 404);
  // ...and a PUT creates one and points the route at it (put_entity_endpoint's `associate`).
  const created = await f.admin('/routes/fk-orphan/service', { method: 'PUT', json: { url: 'http://127.0.0.1:9/made' } });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.is(created.body.path, '/made');
  t.deepEqual((await f.admin('/routes/fk-orphan')).body.service, { id: created.body.id });
  const replaced = await f.admin('/routes/fk-orphan/service', { method: 'PUT', json: { url: 'http://127.0.0.1:9/again' } });
  t.deepEqual([replaced.body.id, replaced.body.path], [created.body.id, '/again']);
});

test('a foreign key sent as the whole entity is its primary key (kong/db/schema/init.lua:963-976, validate_primary_key(pk, true))', async (t) => {
  const service = await f.admin('/services', { method: 'POST', json: { name: 'whole', url: 'http://127.0.0.1:9' } });
  // go-kong sends the Service object it got back, every field included.
  const route = await f.admin('/routes', { method: 'POST', json: { name: 'by-whole', paths: ['/whole'], service: service.body } });
  t.is(route.status, 201, JSON.stringify(route.body));
  t.deepEqual(route.body.service, { id: service.body.id });
  const plugin = await f.admin('/plugins', { method: 'POST', json: { name: 'correlation-id', route: route.body } });
  t.is(plugin.status, 201, JSON.stringify(plugin.body));
  t.deepEqual(plugin.body.route, { id: route.body.id });
});

test("a foreign key's id must be a UUID; a name goes in the endpoint key's field (kong/db/dao/init.lua resolve_foreign)", async (t) => {
  await f.admin('/services', { method: 'POST', json: { name: 'named', url: 'http://127.0.0.1:9' } });
  const byIdName = await f.admin('/routes', { method: 'POST', json: { name: 'id-is-a-name', paths: ['/n'], service: { id: 'named' } } });
  t.is(byIdName.status, 400);
  t.like(byIdName.body, { code: 2, name: 'schema violation', fields: { service: { id: 'expected a valid UUID' } } });
  t.is((await f.admin('/routes/id-is-a-name')).status, 404);
  // resolve_foreign looks a key without a valid primary key up by the referenced type's unique fields.
  const byName = await f.admin('/routes', { method: 'POST', json: { name: 'by-name', paths: ['/by-name'], service: { name: 'named' } } });
  t.is(byName.status, 201, JSON.stringify(byName.body));
  const missing = await f.admin('/routes', { method: 'POST', json: { name: 'no-such', paths: ['/x'], service: { id: '00000000-0000-4000-8000-000000000000' } } });
  t.is(missing.status, 400);
  t.is(missing.body.name, 'foreign key violation');
});

test('a foreign key without a primary key is checked as the record it names (09-routes_routes_spec.lua:373-398, 419-460)', async (t) => {
  const oneOf = 'expected one of: grpc, grpcs, http, https, tcp, tls, tls_passthrough, udp';
  const invalid = await f.admin('/routes', { method: 'POST', json: { methods: ['GET'], protocols: ['foo', 'http'], service: { protocol: 'foo' } } });
  t.is(invalid.status, 400);
  // kong/db/schema/init.lua:963-975: validate_primary_key failed, then validate(value, false) speaks
  t.deepEqual(invalid.body, {
    code: 2,
    name: 'schema violation',
    message: `2 schema violations (protocols.1: ${oneOf}; service.protocol: ${oneOf})`,
    fields: { protocols: [oneOf], service: { protocol: oneOf } },
  });
  // a record whose fields are valid: the primary key's error
  const valid = await f.admin('/routes', { method: 'POST', json: { methods: ['GET'], service: { protocol: 'http' } } });
  t.deepEqual(valid.body, { code: 2, name: 'schema violation', message: 'schema violation (service.id: missing primary key)', fields: { service: { id: 'missing primary key' } } });
  // a form's "" is null by the referenced type's schema (arguments.lua:183-186), so no name to resolve
  const multipart = new FormData();
  multipart.append('methods', 'GET');
  multipart.append('service.name', '');
  for (const body of [new URLSearchParams([['methods', 'GET'], ['service.name', '']]), multipart]) {
    const response = await fetch(`${f.gateway.adminUrl}/routes`, { method: 'POST', body });
    t.is(response.status, 400);
    t.deepEqual(((await response.json()) as { fields: unknown }).fields, { service: { id: 'missing primary key' } });
  }
  // ... and its text is read by the field's type: a port that is not a number stays text
  const port = await fetch(`${f.gateway.adminUrl}/routes`, { method: 'POST', body: new URLSearchParams([['methods', 'GET'], ['service.port', '80x']]) });
  t.deepEqual(((await port.json()) as { fields: unknown }).fields, { service: { port: 'expected an integer' } });
});

test("a service's url is split as LuaSocket's url.parse does and validated as its fields (10-services_routes_spec.lua:894-917)", async (t) => {
  const bodies: { body: string | URLSearchParams; headers?: Record<string, string> }[] = [
    { body: JSON.stringify({ url: 'invalid url' }), headers: { 'Content-Type': 'application/json' } },
    { body: new URLSearchParams([['url', 'invalid url']]) },
  ];
  for (const { body, headers } of bodies) {
    const response = await fetch(`${f.gateway.adminUrl}/services`, { method: 'POST', body, headers });
    t.is(response.status, 400);
    t.deepEqual(await response.json(), {
      code: 2,
      name: 'schema violation',
      message: '2 schema violations (host: required field missing; path: should start with: /)',
      fields: { host: 'required field missing', path: 'should start with: /' },
    });
  }
  // kong/db/schema/entities/services.lua:75-106 takes the parts as written: nothing lower-cased or
  // escaped; query, fragment and ;params cut off; typedefs.path (typedefs.lua:71-93, 318-328) judges the path
  const fields = async (url: string) => (await f.admin('/schemas/services/validate', { method: 'POST', json: { url } })).body.fields as unknown;
  t.deepEqual(await fields('http://x.test/a b'), { path: "invalid path: '/a b' (characters outside of the reserved list of RFC 3986 found)" });
  t.deepEqual(await fields('http://x.test//a'), { path: 'must not have empty segments' });
  t.deepEqual(await fields('http://x.test/a%zz%41'), { path: "invalid url-encoded value: '%zz'" });
  t.deepEqual(await fields('http://x.test:abc/'), { port: 'expected an integer' });
  // the shorthand's own error is all: process_auto_fields stops there (kong/db/schema/init.lua:1857-1859)
  t.deepEqual(await fields(''), { url: 'length must be at least 1' });
  const schema = (await f.admin('/schemas/services')).body.fields as Record<string, { starts_with?: string }>[];
  t.is(schema.find((entry) => 'path' in entry)?.path?.starts_with, '/');
  t.deepEqual(await fields('HTTP://x.test'), { protocol: 'expected one of: grpc, grpcs, http, https, tcp, tls, tls_passthrough, udp' });
  // the message lists the fields sorted by name (kong/db/errors.lua:223-248), not in the schema's order
  const scheme = await f.admin('/schemas/services/validate', { method: 'POST', json: { url: 'x.test:443' } });
  // below field.sub, a table as penlight 1.14.0's pl.pretty.write prints it (errors.lua:236-240);
  // policy local: under redis, the conditional checks on port and timeout would fail too
  const deep = await f.admin('/plugins', { method: 'POST', json: { name: 'rate-limiting', config: { minute: 5, policy: 'local', redis: { host: 'h', port: 'x', timeout: 'y' } } } });
  t.is(deep.body.message, 'schema violation (config.redis: {\n  port = "expected an integer",\n  timeout = "expected an integer"\n})');
  const list = await f.admin('/plugins', { method: 'POST', json: { name: 'response-transformer', config: { add: { headers: [1, 'x'] } } } });
  t.is(list.body.message, 'schema violation (config.add: {\n  headers = {\n    "expected a string",\n    "invalid value: x"\n  }\n})');
  t.is(scheme.body.message, '3 schema violations (host: required field missing; path: should start with: /; protocol: expected one of: grpc, grpcs, http, https, tcp, tls, tls_passthrough, udp)');
  const made = await f.admin('/services', { method: 'POST', json: { name: 'by-url', url: 'http://user:pw@[::1]:8080/a;p?q=1#f', path: '/given' } });
  t.is(made.status, 201, JSON.stringify(made.body));
  t.like(made.body, { protocol: 'http', host: '::1', port: 8080, path: '/a' });
  // without a scheme, port 443 is https; without a path, the url's null replaces a given one
  const https = await f.admin('/services', { method: 'POST', json: { name: 'by-port', url: '//x.test:443', path: '/given' } });
  t.like(https.body, { protocol: 'https', host: 'x.test', port: 443, path: null });
});

test("a null url, or an empty one in a form or multipart body, is split as the text tostring(ngx.null) (arguments.lua:242-253, schema/init.lua:1805-1806, services.lua:79)", async (t) => {
  // LuaSocket's url.parse("userdata: NULL"): scheme "userdata", path " NULL", no host
  const expected = {
    code: 2,
    name: 'schema violation',
    message: '3 schema violations (host: required field missing; path: should start with: /; protocol: expected one of: grpc, grpcs, http, https, tcp, tls, tls_passthrough, udp)',
    fields: { host: 'required field missing', path: 'should start with: /', protocol: 'expected one of: grpc, grpcs, http, https, tcp, tls, tls_passthrough, udp' },
  };
  const multipart = new FormData();
  multipart.set('name', 'null-url');
  multipart.set('url', '');
  const bodies: Array<{ body: string | URLSearchParams | FormData; headers?: Record<string, string> }> = [
    { body: JSON.stringify({ name: 'null-url', url: null }), headers: { 'Content-Type': 'application/json' } },
    { body: new URLSearchParams([['name', 'null-url'], ['url', '']]) },
    { body: multipart },
  ];
  for (const { body, headers } of bodies) {
    const response = await fetch(`${f.gateway.adminUrl}/services`, { method: 'POST', body, headers });
    t.is(response.status, 400);
    t.deepEqual(await response.json(), expected);
  }
  // JSON's empty string is a string shorter than 1; a form's url parts as JSON's
  t.deepEqual((await f.admin('/services', { method: 'POST', json: { url: '' } })).body.fields, { url: 'length must be at least 1' });
  const form = await fetch(`${f.gateway.adminUrl}/services`, { method: 'POST', body: new URLSearchParams([['name', 'form-url'], ['url', 'https://x.test:8443/p'], ['port', '1']]) });
  t.is(form.status, 201);
  t.like(await form.json(), { protocol: 'https', host: 'x.test', port: 8443, path: '/p' });
  const twice = await fetch(`${f.gateway.adminUrl}/services`, { method: 'POST', body: new URLSearchParams([['url', 'http://a.test'], ['url', 'http://b.test']]) });
  t.deepEqual(((await twice.json()) as { fields: unknown }).fields, { url: 'expected a string' });
});

test('a URL key its endpoint key field refuses is 400 invalid unique, for every method (kong/db/dao/init.lua:349-371, 19-vaults_spec.lua:173-186)', async (t) => {
  const message = "invalid value 'a b': the only accepted ascii characters are alphanumerics or ., -, _, and ~";
  for (const [method, path] of [['GET', '/services/a%20b'], ['PATCH', '/services/a%20b'], ['PUT', '/services/a%20b'], ['DELETE', '/services/a%20b'], ['GET', '/services/a%20b/routes'], ['GET', '/routes/a%20b']] as const) {
    const response = await f.admin(path, { method, ...(method === 'PATCH' || method === 'PUT' ? { json: { host: 'example.test' } } : {}) });
    t.is(response.status, 400, `${method} ${path}`);
    t.deepEqual(response.body, { code: 10, name: 'invalid unique name', message }, `${method} ${path}`);
  }
  // a valid name no entity has is still 404; a consumer's username takes any text
  t.is((await f.admin('/services/no-such-service')).status, 404);
  t.is((await f.admin('/consumers/a%20b')).status, 404);
});

test('a URL key is read as ngx.unescape_uri reads it: + is a space, bytes that are not UTF-8 refused with Kong\'s position (endpoints.lua:244-266, typedefs.lua:137-141, string.lua:85-104)', async (t) => {
  const utf8 = (at: number) => ({ code: 10, name: 'invalid unique name', message: `invalid utf-8 character sequence detected at position ${at}` });
  for (const [path, at] of [['/services/%FF', 1], ['/services/ab%FF', 3], ['/services/%C3%41', 1], ['/services/%FF/routes', 1], ['/routes/%E2%82', 1]] as const) {
    for (const method of ['GET', 'DELETE'] as const) {
      const response = await f.admin(path, { method });
      t.is(response.status, path.endsWith('/routes') && method === 'DELETE' ? 405 : 400, `${method} ${path}`);
      if (response.status === 400) t.deepEqual(response.body, utf8(at), `${method} ${path}`);
    }
  }
  // well-formed escapes name the entity; '+' is a space (lua-nginx-module ngx_http_lua_unescape_uri)
  await f.admin('/consumers', { method: 'POST', json: { username: 'plus sign' } });
  t.is((await f.admin('/consumers/plus+sign')).body.username, 'plus sign');
  t.is((await f.admin('/consumers/plus%2Bsign')).status, 404);
  await f.admin('/services', { method: 'POST', json: { name: 'café', url: 'http://example.test' } });
  t.is((await f.admin('/services/caf%C3%A9')).body.name, 'café');
  t.deepEqual((await f.admin('/services/a+b')).body.message, "invalid value 'a b': the only accepted ascii characters are alphanumerics or ., -, _, and ~");
  // known difference: a field Kong does not check for UTF-8 (a username, a key) is refused the
  // same; Kong hands the bytes to PostgreSQL, which refuses them (500)
  t.deepEqual((await f.admin('/consumers/%FF')).body, { code: 10, name: 'invalid unique username', message: 'invalid utf-8 character sequence detected at position 1' });
  // a tag the same (kong/api/endpoints.lua:237-240)
  t.is((await f.admin('/tags/%FF')).body.message, 'invalid utf-8 character sequence detected at position 1');
});

test('a header name is letters, digits, - and _, refused with Kong\'s message (03-plugins/09-key-auth/01-api_spec.lua:363-403)', async (t) => {
  const refused = await f.admin('/plugins', { method: 'POST', json: { name: 'key-auth', config: { key_names: ['hello\\world'] } } });
  t.is(refused.status, 400);
  // typedefs.header_name: kong/tools/http.lua:271-282
  t.deepEqual(refused.body.fields, { config: { key_names: ["bad header name 'hello\\world', allowed characters are A-Z, a-z, 0-9, '_', and '-'"] } });
  const termination = await f.admin('/plugins', { method: 'POST', json: { name: 'request-termination', config: { trigger: 'x.y' } } });
  t.deepEqual(termination.body.fields, { config: { trigger: "bad header name 'x.y', allowed characters are A-Z, a-z, 0-9, '_', and '-'" } });
  const accepted = await f.admin('/plugins', { method: 'POST', json: { name: 'key-auth', config: { key_names: ['hello-world_2'] } } });
  t.is(accepted.status, 201, JSON.stringify(accepted.body));
  t.deepEqual(accepted.body.config.key_names, ['hello-world_2']);
  await f.admin(`/plugins/${accepted.body.id}`, { method: 'DELETE' });
});

test('a type without an endpoint key is named by its id only: another key is 400 invalid primary key (kong/db/dao/init.lua:999-1011, errors.lua:194-202)', async (t) => {
  const invalid = { code: 1, name: 'invalid primary key', message: `invalid primary key: '{id="expected a valid UUID"}'`, fields: { id: 'expected a valid UUID' } };
  for (const [method, path] of [['GET', '/acls/grp'], ['PUT', '/acls/grp'], ['PATCH', '/acls/grp'], ['DELETE', '/acls/grp'], ['GET', '/ca_certificates/ca'], ['GET', '/acls/grp/consumer']] as const) {
    const response = await f.admin(path, { method, ...(method === 'PATCH' || method === 'PUT' ? { json: { group: 'g' } } : {}) });
    t.is(response.status, 400, `${method} ${path}`);
    t.deepEqual(response.body, invalid, `${method} ${path}`);
  }
  // a consumer's ACL is named by its group there (kong/plugins/acl/api.lua)
  await f.admin('/consumers', { method: 'POST', json: { username: 'grouped' } });
  t.is((await f.admin('/consumers/grouped/acls/grp', { method: 'PUT', json: {} })).status, 200);
  t.is((await f.admin('/consumers/grouped/acls/grp')).body.group, 'grp');
});

test('POST /schemas/routes/validate runs the route checks: a regex with unmatched parentheses is refused (routes.lua validate_route)', async (t) => {
  // traditional_compatible validates each route with the ATC router (kong/db/schema/entities/routes.lua).
  const validate = (paths: string[]) => f.admin('/schemas/routes/validate', { method: 'POST', json: { paths } });
  t.is((await validate(['/prefix/', '~/payment/(docs|health)$'])).status, 200);
  const one = await validate(['~/payment/(docs|health))']);
  t.is(one.status, 400);
  t.true(one.body.message.startsWith('schema violation (paths.1: invalid regex:'), one.body.message);
  const second = await validate(['/prefix/', '~/payment/(docs|health))', '/foo']);
  t.true(second.body.message.startsWith('schema violation (paths.2: invalid regex:'), second.body.message);
});

test("a key-auth credential's ttl reads back as the whole seconds left (kong/db/strategies/postgres/init.lua:1064-1068)", async (t) => {
  // Kong stores created_at + ttl (get_ttl_value) and selects FLOOR(ttl - CURRENT_TIMESTAMP).
  await f.admin('/consumers', { method: 'POST', json: { username: 'ttl-reader' } });
  await f.gateway.clock.advance(400); // created_at is whole seconds: 0.4 s of the first second is gone
  const created = await f.admin('/consumers/ttl-reader/key-auth', { method: 'POST', json: { key: 'ttl-read', ttl: 10 } });
  t.is(created.body.ttl, 9, 'already counting down when it is created');
  await f.gateway.clock.advance(3_000);
  t.is((await f.admin('/key-auths/ttl-read')).body.ttl, 6);
  await f.gateway.clock.advance(6_600);
  t.is((await f.admin('/key-auths/ttl-read')).status, 404, 'gone when the time is up');
});

test('created_at: a given one is kept, a PUT without one stamps now; updated_at is always now (kong/db/schema/init.lua:1897-1917, postgres/init.lua:955-960)', async (t) => {
  const stamps = (body: { created_at: number; updated_at: number }) => [body.created_at, body.updated_at > 2000];
  const created = await f.admin('/services', { method: 'POST', json: { name: 'stamped', url: 'http://127.0.0.1:9', created_at: 1000, updated_at: 2000 } });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.deepEqual(stamps(created.body), [1000, true]);
  t.deepEqual(stamps((await f.admin('/services/stamped', { method: 'PATCH', json: { retries: 1 } })).body), [1000, true]);
  t.deepEqual(stamps((await f.admin('/services/stamped', { method: 'PATCH', json: { created_at: 1500, updated_at: 2000 } })).body), [1500, true]);
  // the upsert sets created_at = EXCLUDED.created_at: process_auto_fields stamped it, as for an insert
  const put = await f.admin('/services/stamped', { method: 'PUT', json: { url: 'http://127.0.0.1:9' } });
  t.is(put.body.id, created.body.id);
  t.true(put.body.created_at > 1500 && put.body.created_at === put.body.updated_at, JSON.stringify(put.body));
  t.deepEqual(stamps((await f.admin('/services/stamped', { method: 'PUT', json: { url: 'http://127.0.0.1:9', created_at: 1200 } })).body), [1200, true]);
  t.is((await f.admin('/services', { method: 'POST', json: { name: 'stamped-badly', url: 'http://127.0.0.1:9', created_at: 'yesterday' } })).body.fields?.created_at, 'expected an integer');
});

test('GET /consumers?custom_id= selects by custom_id (kong/api/routes/consumers.lua:9-36)', async (t) => {
  const consumer = await f.admin('/consumers', { method: 'POST', json: { username: 'by-custom', custom_id: 'ext-42' } });
  await f.admin('/consumers', { method: 'POST', json: { username: 'other-custom', custom_id: 'ext-43' } });
  const found = await f.admin('/consumers?custom_id=ext-42');
  t.is(found.status, 200);
  t.deepEqual(found.body, { data: [consumer.body], next: null });
  t.deepEqual(kongAdminProblems('GET', '/consumers', 200, found.body), []);
  t.deepEqual((await f.admin('/consumers?custom_id=nobody')).body, { data: [], next: null });
  const empty = await f.admin('/consumers?custom_id=');
  t.deepEqual([empty.status, empty.body], [400, { message: 'custom_id must be an unempty string' }]);
});

test('/tags lists every tag of every entity, /tags/{tag} the entities with one (kong/api/routes/tags.lua, postgres/tags.lua)', async (t) => {
  const consumer = await f.admin('/consumers', { method: 'POST', json: { username: 'tagged', tags: ['tag-a', 'tag-b'] } });
  const service = await f.admin('/services', { method: 'POST', json: { name: 'tagged', url: 'http://127.0.0.1:9', tags: ['tag-b'] } });
  const all = await f.admin('/tags');
  t.is(all.status, 200);
  t.deepEqual(kongAdminProblems('GET', '/tags', 200, all.body), []);
  const mine = all.body.data.filter((row: { tag: string }) => row.tag.startsWith('tag-'));
  t.deepEqual(
    mine.sort((a: { entity_id: string; tag: string }, b: { entity_id: string; tag: string }) => `${a.entity_id}${a.tag}`.localeCompare(`${b.entity_id}${b.tag}`)),
    [
      { entity_id: consumer.body.id, entity_name: 'consumers', tag: 'tag-a' },
      { entity_id: consumer.body.id, entity_name: 'consumers', tag: 'tag-b' },
      { entity_id: service.body.id, entity_name: 'services', tag: 'tag-b' },
    ].sort((a, b) => `${a.entity_id}${a.tag}`.localeCompare(`${b.entity_id}${b.tag}`)),
  );
  const byTag = await f.admin('/tags/tag-b');
  t.deepEqual(kongAdminProblems('GET', '/tags/{tags}', 200, byTag.body), []);
  t.deepEqual(byTag.body.data.map((row: { entity_name: string }) => row.entity_name).sort(), ['consumers', 'services']);
  // Paged by [entity_id, ordinality]: one row a page walks every row once.
  const seen: string[] = [];
  let next: string | null = '/tags?size=1';
  while (next) {
    const page = await f.admin(next);
    seen.push(...page.body.data.map((row: { entity_id: string; tag: string }) => `${row.entity_id}:${row.tag}`));
    next = page.body.next;
  }
  t.deepEqual(seen, all.body.data.map((row: { entity_id: string; tag: string }) => `${row.entity_id}:${row.tag}`));
});

test('/schemas/{entity} describes every entity type Kong has, run here or not (kong/api/routes/kong.lua /schemas/:db_entity_name)', async (t) => {
  // go-kong's TestSchemaService reads these; describing a type is not running it.
  for (const name of ['services', 'routes', 'consumers', 'plugins', 'keyauth_credentials', 'upstreams', 'targets', 'certificates', 'ca_certificates', 'snis', 'tags', 'vaults', 'keys', 'key_sets']) {
    const schema = await f.admin(`/schemas/${name}`);
    t.is(schema.status, 200, name);
    t.true(Array.isArray(schema.body.fields) && schema.body.fields.length > 0, name);
  }
  // kong/db/schema/entities/upstreams.lua: slots default 10000, healthchecks' defaults from gen_fields.
  const upstreams = (await f.admin('/schemas/upstreams')).body.fields as Array<Record<string, any>>;
  t.like(upstreams.find((field) => field.slots)?.slots, { type: 'integer', default: 10000, between: [10, 65536] });
  const healthchecks = upstreams.find((field) => field.healthchecks)?.healthchecks;
  const active = healthchecks.fields.find((field: Record<string, unknown>) => field.active).active;
  t.like(active.fields.find((field: Record<string, unknown>) => field.concurrency).concurrency, { default: 10 });
  // Still not run: a write is refused, naming the type.
  const write = await f.admin('/upstreams', { method: 'POST', json: { name: 'u' } });
  t.is(write.status, 400);
  t.regex(write.body.message, /upstreams: not supported by the local gateway/);
  t.is((await f.admin('/schemas/nope')).status, 404);
});

test("a route's protocols: at least one, and from one of Kong's subsets (routes.lua:154-166; 06-routes_spec.lua:150-175)", async (t) => {
  await f.admin('/services', { method: 'POST', json: { name: 'protocols-owner', url: 'http://127.0.0.1:9' } });
  const route = { paths: ['/protocols'], service: { name: 'protocols-owner' } };
  const empty = await f.admin('/routes', { method: 'POST', json: { ...route, name: 'protocols-empty', protocols: [] } });
  t.is(empty.status, 400);
  t.is(empty.body.message, 'schema violation (protocols: length must be at least 1)');
  for (const [protocols, sets] of [
    [['http', 'tcp'], "('http', 'https'), ('tcp', 'tls', 'udp')"],
    [['https', 'tls'], "('http', 'https'), ('tcp', 'tls', 'udp')"],
    [['grpc', 'https'], "('grpc', 'grpcs'), ('http', 'https')"],
  ] as const) {
    const mixed = await f.admin('/routes', { method: 'POST', json: { ...route, name: 'protocols-mixed', protocols } });
    t.is(mixed.status, 400, protocols.join());
    t.deepEqual(mixed.body.fields, { protocols: `these sets are mutually exclusive: ${sets}` }, protocols.join());
  }
  // an update too: before, the control plane stored `[]`, and every data plane refused each
  // configuration from then on (keeping the one before it)
  t.is((await f.admin('/routes', { method: 'POST', json: { ...route, name: 'protocols-kept' } })).status, 201);
  t.is((await f.admin('/routes/protocols-kept', { method: 'PATCH', json: { protocols: [] } })).status, 400);
  t.deepEqual((await f.admin('/routes/protocols-kept')).body.protocols, ['http', 'https']);
});

test('a protocol Kong takes that the data plane does not run is refused at the write, naming the field (a data plane would refuse the whole configuration)', async (t) => {
  const service = await f.admin('/services', { method: 'POST', json: { name: 'stream-probe', protocol: 'tcp', host: 'example.com', port: 80 } });
  t.is(service.status, 400);
  t.deepEqual(service.body.fields, { protocol: 'not supported by the local gateway: expected one of: http, https' });
  await f.admin('/services', { method: 'POST', json: { name: 'grpc-owner', url: 'http://127.0.0.1:9' } });
  const route = await f.admin('/routes', { method: 'POST', json: { name: 'grpc-probe', protocols: ['grpc'], paths: ['/g'], service: { name: 'grpc-owner' } } });
  t.is(route.status, 400);
  t.regex(String(route.body.fields?.protocols), /^not supported by the local gateway: /);
  // the configuration still moves: a write after the refusals reaches the data plane
  t.is((await f.admin('/routes', { method: 'POST', json: { name: 'after-probe', paths: ['/after-probe'], service: { name: 'grpc-owner' } } })).status, 201);
  const proxied = await fetch(`${f.gateway.proxyUrl}/after-probe`);
  t.not(proxied.status, 404, 'the route written after the refusals is served');
});

test("a plugin's protocols are its schema's: the plugin's field replaces the entity's (plugins.lua:26; typedefs.lua:474-488; schema/init.lua:1120-1131)", async (t) => {
  const httpProtocols = ['grpc', 'grpcs', 'http', 'https'];
  const allProtocols = [...httpProtocols, 'tcp', 'tls', 'tls_passthrough', 'udp'];
  const http = `expected one of: ${httpProtocols.join(', ')}`;
  const any = `expected one of: ${allProtocols.join(', ')}`;
  // key-auth/schema.lua:8 (typedefs.protocols_http): "tcp", in the entity's typedefs.protocols, is
  // refused by the plugin's one_of, as "bogus" is; a set's element errors are keyed by position
  for (const [name, protocols, fields] of [
    ['key-auth', ['htps'], [http]],
    ['key-auth', ['http', 'tcp'], [null, http]],
    ['correlation-id', ['HTTP', 'HTTPS'], [http, http]],
    ['animal-store-edge', ['bogus'], [http]],
    ['prometheus', ['bogus'], [any]],
  ] as const) {
    const list = fields.flatMap((error, i) => (error === null ? [] : [`protocols.${i + 1}: ${error}`]));
    const message = list.length === 1 ? `schema violation (${list[0]})` : `${list.length} schema violations (${list.join('; ')})`;
    const expected = { code: 2, name: 'schema violation', message, fields: { protocols: fields } };
    const created = await f.admin('/plugins', { method: 'POST', json: { name, protocols } });
    t.deepEqual([created.status, created.body], [400, expected], `${name} ${protocols.join()}`);
    const validated = await f.admin('/schemas/plugins/validate', { method: 'POST', json: { name, protocols } });
    t.deepEqual([validated.status, validated.body], [400, expected], `validate ${name} ${protocols.join()}`);
  }
  // prometheus/schema.lua:15 keeps typedefs.protocols: a stream protocol is Kong's to store
  const stream = await f.admin('/plugins', { method: 'POST', json: { name: 'prometheus', protocols: ['tcp'] } });
  t.is(stream.status, 201, JSON.stringify(stream.body));
  t.is((await f.admin(`/plugins/${stream.body.id}`, { method: 'DELETE' })).status, 204);
  // an update is validated by the same field
  const plugin = await f.admin('/plugins', { method: 'POST', json: { name: 'request-termination', instance_name: 'protocols-patched' } });
  t.deepEqual(plugin.body.protocols, httpProtocols);
  const patched = await f.admin('/plugins/protocols-patched', { method: 'PATCH', json: { protocols: ['https', 'tls'] } });
  t.is(patched.status, 400);
  t.deepEqual(patched.body.fields, { protocols: [null, http] });
  t.deepEqual((await f.admin('/plugins/protocols-patched')).body.protocols, httpProtocols);
  // what /schemas advertises: the entity's typedefs.protocols, each plugin's own field
  type Fields = Array<Record<string, { elements?: unknown; default?: unknown }>>;
  const elements = async (path: string) => ((await f.admin(path)).body.fields as Fields).find((field) => field.protocols)?.protocols;
  t.like(await elements('/schemas/plugins'), { default: httpProtocols, elements: { type: 'string', one_of: allProtocols } });
  t.like(await elements('/schemas/plugins/key-auth'), { default: httpProtocols, elements: { type: 'string', one_of: httpProtocols } });
  t.like(await elements('/schemas/plugins/animal-store-edge'), { default: httpProtocols, elements: { type: 'string', one_of: httpProtocols } });
  t.like(await elements('/schemas/plugins/prometheus'), { default: httpProtocols, elements: { type: 'string', one_of: allProtocols } });
});

test("a plugin's instance_name is typedefs.utf8_name (plugins.lua:19; typedefs.lua:137-151, 415-420)", async (t) => {
  for (const name of ['a b', 'x/y']) {
    const error = `invalid value '${name}': the only accepted ascii characters are alphanumerics or ., -, _, and ~`;
    const created = await f.admin('/plugins', { method: 'POST', json: { name: 'correlation-id', instance_name: name } });
    t.deepEqual([created.status, created.body], [400, { code: 2, name: 'schema violation', message: `schema violation (instance_name: ${error})`, fields: { instance_name: error } }]);
  }
  const utf8 = await f.admin('/plugins', { method: 'POST', json: { name: 'correlation-id', instance_name: 'ünïcode.~_-1' } });
  t.is(utf8.status, 201, JSON.stringify(utf8.body));
  t.is((await f.admin(`/plugins/${utf8.body.id}`, { method: 'DELETE' })).status, 204);
  const schema = (await f.admin('/schemas/plugins')).body.fields as Array<Record<string, unknown>>;
  t.deepEqual(schema.find((field) => field.instance_name)?.instance_name, { type: 'string', unique: true });
});

test('POST /schemas/{entity}/validate drops a db_entity_name field before validating (kong/api/routes/kong.lua:208-213)', async (t) => {
  const valid = await f.admin('/schemas/services/validate', { method: 'POST', json: { db_entity_name: 'x', host: 'a.b' } });
  t.deepEqual([valid.status, valid.body], [200, { message: 'schema validation successful' }]);
  // /schemas/plugins/validate is a route of its own (:198-202): the field is unknown there
  const plugin = await f.admin('/schemas/plugins/validate', { method: 'POST', json: { db_entity_name: 'x', name: 'correlation-id' } });
  t.deepEqual(plugin.body.fields, { db_entity_name: 'unknown field' });
});

test('a POST with an id that exists is a primary key violation, 400 (postgres/init.lua:229-267 toerror, errors.lua:265-274, endpoints.lua:28)', async (t) => {
  const first = await f.admin('/services', { method: 'POST', json: { name: 'pk-first', url: 'http://example.test' } });
  const id = first.body.id as string;
  const again = await f.admin('/services', { method: 'POST', json: { id, name: 'pk-second', url: 'http://example.test' } });
  t.is(again.status, 400);
  t.deepEqual(again.body, { code: 3, name: 'primary key violation', message: `primary key violation on key '{id="${id}"}'`, fields: { id } });
  // validated first: a body the schema refuses is that schema violation
  const invalid = await f.admin('/services', { method: 'POST', json: { id, name: 'pk-second' } });
  t.is(invalid.status, 400);
  t.is(invalid.body.code, 2);
  const route = await f.admin('/services/pk-first/routes', { method: 'POST', json: { paths: ['/pk'] } });
  const plugin = await f.admin(`/routes/${route.body.id}/plugins`, { method: 'POST', json: { name: 'correlation-id' } });
  const samePlugin = await f.admin(`/routes/${route.body.id}/plugins`, { method: 'POST', json: { id: plugin.body.id, name: 'request-termination' } });
  t.is(samePlugin.status, 400);
  t.is(samePlugin.body.code, 3);
  t.is((await f.admin(`/services/${id}`)).body.name, 'pk-first');
});

test("a key-auth credential's id that exists is a unique violation on its key: the field toerror finds in PostgreSQL's 'duplicate key value' (postgres/init.lua:248-256)", async (t) => {
  await f.admin('/consumers', { method: 'POST', json: { username: 'pk-keys' } });
  const first = await f.admin('/consumers/pk-keys/key-auth', { method: 'POST', json: { key: 'pk-first-key' } });
  const again = await f.admin('/consumers/pk-keys/key-auth', { method: 'POST', json: { id: first.body.id, key: 'pk-second-key' } });
  t.is(again.status, 409);
  t.deepEqual(again.body, {
    code: 5,
    name: 'unique constraint violation',
    message: `UNIQUE violation detected on '{key="pk-second-key"}'`,
    fields: { key: 'pk-second-key' },
  });
});

test('POST /schemas/{entity}/validate without a body validates no fields: Kong\'s self.params is always a table (kong/api/routes/kong.lua:198-214; 02-kong_routes_spec.lua:454-462)', async (t) => {
  const empty = (path: string, headers: Record<string, string> = {}) => f.admin(path, { method: 'POST', headers });
  const bodiless: Array<Record<string, string>> = [{}, { 'Content-Length': '0' }, { 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': '0' }];
  for (const headers of bodiless) {
    const services = await empty('/schemas/services/validate', headers);
    t.is(services.status, 400, JSON.stringify(headers));
    t.deepEqual(services.body, { code: 2, name: 'schema violation', message: 'schema violation (host: required field missing)', fields: { host: 'required field missing' } });
    const plugins = await empty('/schemas/plugins/validate', headers);
    t.is(plugins.status, 400);
    t.deepEqual(plugins.body.fields, { name: 'required field missing' });
  }
});
