import { join } from 'node:path';
import test from 'ava';
import { describePlugins } from '../../gateway/local/data-plane-entry.ts';
import { FIXTURE_PLUGINS_DIR } from '../helpers/data-plane.ts';
import { REPO_ROOT } from '../helpers/process.ts';

// Describe mode: the data plane's Lua loads each plugin's handler and schema.lua and tells the
// control plane PRIORITY, VERSION (kong/db/dao/plugins.lua load_plugin_handler checks), phases
// and schema; what it cannot hand over is an error naming the plugin and field.

test('custom plugins: priority, version, phases and schema with typedefs as data', async (t) => {
  const described = await describePlugins({ plugins: ['dp-probe', 'dp-probe-auth'], pluginsDir: FIXTURE_PLUGINS_DIR });
  // kong/api/routes/kong.lua: GET / reports lua_version as jit.version
  t.regex(described.lua_version, /^LuaJIT 2\.1/);
  const [probe, auth] = described.plugins;
  t.like(probe, { name: 'dp-probe', priority: 5000, version: '1.2.3' });
  t.deepEqual(probe!.phases, ['init_worker', 'configure', 'rewrite', 'access', 'header_filter', 'body_filter', 'log']);
  const fields = (probe!.schema as { fields: Array<Record<string, any>> }).fields;
  t.deepEqual(fields[0], {
    protocols: { type: 'set', required: true, default: ['grpc', 'grpcs', 'http', 'https'], elements: { type: 'string', one_of: ['grpc', 'grpcs', 'http', 'https'] } },
  });
  t.like(auth, { name: 'dp-probe-auth', priority: 3000, version: '1.0.0' });
  // typedefs.no_consumer: eq = ngx.null comes out as null
  t.deepEqual((auth!.schema as { fields: Array<Record<string, unknown>> }).fields[0], { consumer: { type: 'foreign', reference: 'consumers', eq: null } });
});

test('the animal-store-edge plugin of gateway/plugins', async (t) => {
  const [edge] = (await describePlugins({ plugins: ['animal-store-edge'], pluginsDir: join(REPO_ROOT, 'gateway', 'plugins') })).plugins;
  t.is(edge!.error, undefined);
  t.is(edge!.name, 'animal-store-edge');
  t.true(Number.isInteger(edge!.priority));
  t.regex(edge!.version!, /^\d+\.\d+\.\d+$/);
  t.truthy(edge!.schema);
});

test('a VERSION Kong takes that is not x.y.z: kept as Kong keeps it (kong/db/dao/plugins.lua:146-156)', async (t) => {
  const described = (await describePlugins({ plugins: ['dp-version-tagged', 'dp-version-short'], pluginsDir: FIXTURE_PLUGINS_DIR })).plugins;
  t.like(described[0], { name: 'dp-version-tagged', version: '0.1', error: undefined });
  t.like(described[1], { name: 'dp-version-short', version: '1.0', error: undefined });
});

test('what cannot be described is an error naming the plugin and what is wrong', async (t) => {
  const described = (await describePlugins({ plugins: ['dp-bad-schema', 'dp-bad-priority', 'not-installed'], pluginsDir: FIXTURE_PLUGINS_DIR })).plugins;
  t.regex(described[0]!.error!, /^schema\.lua: fields\.config\.fields\.limit\.custom_validator is a Lua function/);
  t.regex(described[1]!.error!, /Plugin "dp-bad-priority" cannot be loaded because its PRIORITY field is not a valid integer number, got: "1.5"/);
  t.regex(described[2]!.error!, /^not-installed plugin is enabled but not installed/);
});
