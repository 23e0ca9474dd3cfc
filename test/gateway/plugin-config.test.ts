import test from 'ava';
import { startFixture, type Fixture } from '../helpers/fixture.ts';

// Plugins' config as Kong 3.9.3 validates and writes it: PATCH merges, the errors of entity checks
// and custom validators, and the typedefs of the bundled plugins' fields.
let f: Fixture;

test.before(async () => {
  f = await startFixture(['_format_version: "3.0"', 'services:', '- name: s', '  url: http://127.0.0.1:9', '  routes:', '  - name: r', '    paths: [/r]', ''].join('\n'));
});
test.after.always(async () => {
  await f?.dispose();
});

test.serial('PATCH merges config record by record: a nested record keeps the fields the patch does not give (kong/db/schema/init.lua:2035-2059 merge_values)', async (t) => {
  const created = await f.admin('/routes/r/plugins', {
    method: 'POST',
    json: { name: 'response-transformer', config: { add: { headers: ['x-a:1'] } } },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const patched = await f.admin(`/plugins/${created.body.id}`, { method: 'PATCH', json: { config: { add: { json: ['k:v'] } } } });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  t.deepEqual(patched.body.config.add, { json: ['k:v'], json_types: [], headers: ['x-a:1'] });
  // arrays are replaced, not merged
  const replaced = await f.admin(`/plugins/${created.body.id}`, { method: 'PATCH', json: { config: { add: { headers: ['x-b:2'] } } } });
  t.deepEqual(replaced.body.config.add, { json: ['k:v'], json_types: [], headers: ['x-b:2'] });
  t.is((await f.admin(`/plugins/${created.body.id}`, { method: 'DELETE' })).status, 204);

  const limited = await f.admin('/routes/r/plugins', {
    method: 'POST',
    json: { name: 'rate-limiting', config: { minute: 5, policy: 'redis', redis: { host: 'redis.example' } } },
  });
  t.is(limited.status, 201, JSON.stringify(limited.body));
  const port = await f.admin(`/plugins/${limited.body.id}`, { method: 'PATCH', json: { config: { redis: { port: 6380 } } } });
  t.is(port.status, 200, JSON.stringify(port.body));
  t.like(port.body.config.redis, { host: 'redis.example', port: 6380, timeout: 2000 });
  t.is(port.body.config.minute, 5);
  t.is((await f.admin(`/plugins/${limited.body.id}`, { method: 'DELETE' })).status, 204);
});

const validate = (config: Record<string, unknown>, name = 'rate-limiting') =>
  f.admin('/schemas/plugins/validate', { method: 'POST', json: { name, config } });

test("a config's custom_validator answers as the config field's error, not the entity's (kong/db/schema/init.lua:1011-1021)", async (t) => {
  // spec/03-plugins/23-rate-limiting/01-schema_spec.lua:36-48 (rate-limiting/schema.lua:10-36, 100)
  const order = await validate({ second: 20, hour: 10 });
  t.is(order.status, 400);
  t.deepEqual(order.body, {
    code: 2,
    name: 'schema violation',
    message: 'schema violation (config: The limit for hour(10.0) cannot be lower than the limit for second(20.0))',
    fields: { config: 'The limit for hour(10.0) cannot be lower than the limit for second(20.0)' },
  });
  t.deepEqual((await validate({ second: 10, minute: 20, hour: 30, day: 40, month: 60, year: 50 })).body.fields, {
    config: 'The limit for year(50.0) cannot be lower than the limit for month(60.0)',
  });
  t.deepEqual((await validate({ minute: 10, sync_rate: 1 })).body.fields, { config: 'sync_rate can only be used with the redis policy' });
  t.deepEqual((await validate({ minute: 10, policy: 'redis', redis: { host: 'r.example' }, sync_rate: 0.01 })).body.fields, {
    config: 'sync_rate must be greater than 0.02, or -1 to disable',
  });
  // at_least_one_of is an entity check (rate-limiting/schema.lua:199; 01-schema_spec.lua:50-56)
  t.deepEqual((await validate({})).body.fields, {
    '@entity': ["at least one of these fields must be non-empty: 'config.second', 'config.minute', 'config.hour', 'config.day', 'config.month', 'config.year'"],
  });

  // spec/03-plugins/14-request-termination/01-schema_spec.lua:43-67
  const termination = async (config: Record<string, unknown>) => (await validate(config, 'request-termination')).body.fields;
  t.deepEqual(await termination({ message: 'error', body: 'test' }), { config: 'message cannot be used with content_type or body' });
  t.deepEqual(await termination({ message: 'error', content_type: 'text/html', body: 'test' }), { config: 'message cannot be used with content_type or body' });
  t.deepEqual(await termination({ message: 'error', content_type: 'text/html' }), { config: 'message cannot be used with content_type or body' });
  t.deepEqual(await termination({ content_type: 'text/html' }), { config: 'content_type requires a body' });
  t.deepEqual(await termination({ echo: true, content_type: 'text/html', body: '<h1>x</h1>' }), { config: 'echo cannot be used with content_type and body' });
});

test("rate-limiting's conditional checks: the entity's error names the if_field, the then_field's error is its own (kong/db/schema/init.lua:725-765)", async (t) => {
  // spec/03-plugins/23-rate-limiting/01-schema_spec.lua:58-70
  const header = await validate({ second: 10, limit_by: 'header' });
  t.is(header.status, 400);
  t.deepEqual(header.body, {
    code: 2,
    name: 'schema violation',
    message: "2 schema violations (failed conditional validation given value of field 'config.limit_by'; config.header_name: required field missing)",
    fields: { '@entity': ["failed conditional validation given value of field 'config.limit_by'"], config: { header_name: 'required field missing' } },
  });
  t.deepEqual((await validate({ second: 10, limit_by: 'path' })).body.fields, {
    '@entity': ["failed conditional validation given value of field 'config.limit_by'"],
    config: { path: 'required field missing' },
  });
  // 01-schema_spec.lua:118-135
  t.deepEqual((await validate({ second: 10, policy: 'redis', redis: { port: 6379 } })).body.fields, {
    '@entity': ["failed conditional validation given value of field 'config.policy'"],
    config: { redis: { host: 'required field missing' } },
  });
  // rate-limiting/schema.lua:204-211: a port or timeout set to null is refused under the redis policy
  // (stored, every request would fail in handler.lua's get_redis_connection).
  t.deepEqual((await validate({ second: 10, policy: 'redis', redis: { host: 'r.example', port: null, timeout: null } })).body.fields, {
    '@entity': ["failed conditional validation given value of field 'config.policy'", "failed conditional validation given value of field 'config.policy'"],
    config: { redis: { port: 'required field missing', timeout: 'required field missing' } },
  });
  t.is((await validate({ second: 10, policy: 'local', redis: { port: null, timeout: null } })).status, 200);
  // a then_field given but invalid fails the check too (validate_field of then_match, init.lua:752-762)
  t.deepEqual((await validate({ second: 10, limit_by: 'header', header_name: 'a b' })).body.fields, {
    '@entity': ["failed conditional validation given value of field 'config.limit_by'"],
    config: { header_name: "bad header name 'a b', allowed characters are A-Z, a-z, 0-9, '_', and '-'" },
  });
});

test("response-transformer's rename.headers are pairs of valid header names (response-transformer/schema.lua:5-22, 65-70)", async (t) => {
  const rename = async (headers: string[]) => validate({ rename: { headers } }, 'response-transformer');
  t.is((await rename(['x-request-id:x-custom-request-id'])).status, 200);
  // spec/03-plugins/15-response-transformer/03-api_spec.lua:86-121
  t.deepEqual((await rename(['x-request-idx-custom-request-id'])).body.fields, {
    config: { rename: { headers: ['invalid value: x-request-idx-custom-request-id'] } },
  });
  const invalid = await rename(['x-requ,est-id:x-custom-request-id']);
  t.is(invalid.status, 400);
  t.deepEqual(invalid.body.fields, { config: { rename: { headers: ["'x-requ,est-id' is not a valid header"] } } });
  t.deepEqual((await rename(['x-request-id:x-cus,tom'])).body.fields, { config: { rename: { headers: ["'x-cus,tom' is not a valid header"] } } });
  t.deepEqual((await rename(['ok:ok', 'x-request-id:'])).body.fields, { config: { rename: { headers: [null, "'' is not a valid header"] } } });
  // `:*` takes every colon after the name (schema.lua:6)
  t.is((await rename(['x-a::x-b'])).status, 200);
  // add, append and replace take any value after the name (schema.lua:32-37)
  t.is((await validate({ add: { headers: ['x-a:bad value'] } }, 'response-transformer')).status, 200);
});

test("rate-limiting's path is typedefs.path and redis.server_name typedefs.sni (rate-limiting/schema.lua:91; kong/tools/redis/schema.lua:36)", async (t) => {
  // typedefs.lua:71-93, 318-328
  const path = async (value: string) => (await validate({ second: 10, limit_by: 'path', path: value })).body.fields?.config?.path;
  t.is(await path('/a/b%20c'), undefined);
  t.is(await path('x'), 'should start with: /');
  t.is(await path('/a//b'), 'must not have empty segments');
  t.is(await path('/a b'), "invalid path: '/a b' (characters outside of the reserved list of RFC 3986 found)");
  t.is(await path('/a^b'), "invalid path: '/a^b' (characters outside of the reserved list of RFC 3986 found)");
  t.is(await path('/%zz'), "invalid url-encoded value: '%zz'");
  // typedefs.lua:154-169, 422-426
  const sni = async (config: Record<string, unknown>) =>
    (await validate({ second: 10, ...config })).body.fields?.config?.redis?.server_name;
  t.is(await sni({ redis: { server_name: 'redis.example' } }), undefined);
  t.is(await sni({ redis: { server_name: '1.2.3.4' } }), 'must not be an IP');
  t.is(await sni({ redis: { server_name: 'host:80' } }), 'must not have a port');
  t.is(await sni({ redis: { server_name: 'a b' } }), 'invalid value: a b');
  // the deprecated shorthand is a plain string, checked where it lands (rate-limiting/schema.lua:164-173)
  t.is(await sni({ redis_server_name: '1.2.3.4' }), 'must not be an IP');
});
