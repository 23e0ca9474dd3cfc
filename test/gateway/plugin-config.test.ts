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
