import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import anyTest, { type TestFn } from 'ava';
import { startEchoUpstream, type EchoUpstream } from '../helpers/gateway.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { LuaPluginHost } from '../../gateway/local/lua/lua-plugin-host.ts';
import type { LuaVmKind } from '../../gateway/local/lua/vm/lua-vm.ts';

// The local gateway's Lua PDK, through a probe plugin (test/fixtures/plugins/pdk-probe) that
// reports what it saw. Semantics from kong/pdk/*.lua (3.9.1): kong.service.request.set_header
// changes what kong.request.get_header returns; kong.ctx.shared lives for the request;
// kong.response.exit with a table sends JSON; a handler error is a 500 with source "error".
// Every case runs on both VMs the gateway has: LuaJIT (the native addon, Kong's VM family) and
// Lua 5.4 in WebAssembly (the fallback where the addon is not built).
// Serial: tests read the echo upstream's last request.
const test = anyTest.serial as TestFn<{ fixtures: Record<LuaVmKind, Fixture>; upstream: EchoUpstream }>;
const PLUGINS = fileURLToPath(new URL('../fixtures/plugins', import.meta.url));
const VMS: readonly LuaVmKind[] = ['luajit', 'wasmoon'];
/** Small, so that the runaway-allocation case reaches it quickly. */
const MEMORY_LIMIT = 32 * 1024 * 1024;

test.before(async (t) => {
  const upstream = await startEchoUpstream(() => ({ status: 200, headers: { 'x-from-upstream': 'up', 'content-type': 'text/plain' }, body: 'body' }));
  t.context.upstream = upstream;
  t.context.fixtures = {} as Record<LuaVmKind, Fixture>;
  for (const kind of VMS) t.context.fixtures[kind] = await startFixture(
    `
_format_version: "3.0"
services:
  - name: echo
    url: \${UPSTREAM}
    routes:
      - name: observe
        paths: [/observe]
        plugins: [{ name: pdk-probe, config: { greeting: bonjour } }]
      - name: exit
        paths: [/exit]
        plugins: [{ name: pdk-probe, config: { mode: exit } }]
      - name: crash
        paths: [/crash]
        plugins: [{ name: pdk-probe, config: { mode: crash } }]
      - name: ngx-var
        paths: [/ngx-var]
        plugins: [{ name: pdk-probe, config: { mode: ngx-var } }]
      - name: headers
        paths: [/headers]
        plugins: [{ name: pdk-probe, config: { mode: headers } }]
      - name: header-crash
        paths: [/header-crash]
        plugins: [{ name: pdk-probe, config: { mode: header-crash } }]
      - name: body-crash
        paths: [/body-crash]
        plugins: [{ name: pdk-probe, config: { mode: body-crash } }]
      - name: hog
        paths: [/hog]
        plugins: [{ name: pdk-probe, config: { mode: hog } }]
      - name: recurse
        paths: [/recurse]
        plugins: [{ name: pdk-probe, config: { mode: recurse } }]
      - name: bad-op
        paths: [/bad-op]
        plugins: [{ name: pdk-probe, config: { mode: bad-op } }]
      - name: lua51
        paths: [/lua51]
        plugins: [{ name: pdk-probe, config: { mode: lua51 } }]
`,
    { pluginsDir: PLUGINS, upstream, luaVm: { kind, memoryLimit: MEMORY_LIMIT } },
  );
});
test.after.always(async (t) => {
  for (const f of Object.values(t.context.fixtures ?? {})) await f.dispose();
  await t.context.upstream?.close();
});

for (const vm of VMS) {

  test(`[${vm}] request changes, kong.ctx, response headers and the body filter`, async (t) => {
    const f = t.context.fixtures[vm];
    const response = await f.call('/observe/x?q=42');
    t.is(response.status, 200);
    t.is(f.upstream.last()!.headers['x-probe-set'], 'bonjour');
    t.is(response.headers.get('x-probe-shared'), 'bonjour');
    t.is(response.headers.get('x-probe-path'), '/observe/x');
    t.is(response.headers.get('x-probe-query'), '42');
    t.is(response.headers.get('x-probe-dict'), 'nil', 'an undeclared lua_shared_dict is nil');
    t.is(response.headers.get('x-probe-source'), 'service');
    t.is(response.headers.get('x-probe-upstream-header'), 'up');
    t.is(response.headers.get('x-probe-many'), '1, 2');
    // add_header appends a value: get_header still answers the first, get_headers lists them all.
    t.is(response.headers.get('x-probe-added'), 'a|a,b');
    t.is(f.upstream.last()!.headers['x-probe-added'], 'a, b');
    t.is(response.headers.get('x-probe-many-seen'), '1,2');
    t.is(response.body, 'body!');
  });

  test(`[${vm}] kong.response.exit with a table answers JSON and later phases still run`, async (t) => {
    const response = await t.context.fixtures[vm].call('/exit');
    t.is(response.status, 418);
    t.deepEqual(response.body, { message: 'short and stout', greeting: 'hello' });
    t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
    t.is(response.headers.get('x-probe'), 'exit');
    t.is(response.headers.get('x-probe-source'), 'exit');
  });

  test(`[${vm}] an error in a handler answers 500 with source "error" and is logged`, async (t) => {
    const f = t.context.fixtures[vm];
    const response = await f.call('/crash');
    t.is(response.status, 500);
    t.is(response.body.message, 'An unexpected error occurred');
    t.is(response.headers.get('x-probe-source'), 'error');
    t.true(f.gateway.logs.some((line) => line.includes('probe crashed on purpose')));
  });

  // kong/pdk/private/checks.lua (3.9.1): validate_header, validate_headers, normalize_multi_header;
  // kong/pdk/service/request.lua: set_header("Host") sets $upstream_host, which kong/runloop/handler.lua
  // sends as the Host; kong/pdk/response.lua: Transfer-Encoding is ignored with a warning.
  test(`[${vm}] header values as Kong takes them: arrays, "" as " ", LuaJIT numbers, Host, validation errors`, async (t) => {
    const f = t.context.fixtures[vm];
    const response = await f.call('/headers');
    t.is(response.status, 200);
    const upstream = f.upstream.last()!.headers;
    t.is(upstream['x-multi'], 'm1, m2');
    t.is(upstream['x-numbers'], '42, 1.5, 9.007199254741e+15');
    t.false('x-cleared' in upstream);
    t.is(upstream.host, 'probe.example');
    t.is(upstream['x-tab'], 'a\tb');
    t.false('x-ctl' in upstream);
    t.false('x-half' in upstream, 'set_headers checks every entry before setting any');
    t.is(response.headers.get('x-probe-seen'), '[ ]|m1,m2|nil');
    t.deepEqual(response.headers.get('x-probe-errors')!.split('|').map((e) => e.replace(/^[^:]*:\d+: /, '')), [
      'invalid header value in array "X-Bad": got number, expected string',
      'invalid header value for "X-Bad": got function, expected array of string, string, number or boolean',
      'invalid header name "7": got number, expected string',
      'header "X-Ctl": control character 0x01 cannot be sent by the local gateway (Node\'s HTTP refuses it)',
      'header "X-Ctl": control character 0x1F cannot be sent by the local gateway (Node\'s HTTP refuses it)',
      'header "X\\30": control character 0x1E cannot be sent by the local gateway (Node\'s HTTP refuses it)',
      'header "X\\9T": control character 0x09 cannot be sent by the local gateway (Node\'s HTTP refuses it)',
      'invalid header value in array "X-Bad": got boolean, expected string',
      'code must be a number between 100 and 599',
      'invalid header value for "X-Bad": got function, expected string, number, boolean or array of strings',
    ]);
    t.is(response.headers.get('x-resp-multi'), 'r1, r2');
    t.is(response.headers.get('x-from-upstream'), null);
    t.is(response.headers.get('x-resp-flag'), 'true');
    t.true(f.gateway.logs.some((line) => line.includes('manually setting Transfer-Encoding. Ignored.')));
  });

  // kong/init.lua (3.9.1) runs header_filter and body_filter handlers without pcall; nginx then
  // logs "failed to run header_filter_by_lua*" and aborts the request without a response
  // (openresty/lua-nginx-module#2314). The log phase still runs.
  for (const phase of ['header', 'body']) {
    test(`[${vm}] an error in ${phase}_filter aborts the request without a response; the log phase still runs`, async (t) => {
      const f = t.context.fixtures[vm];
      await t.throwsAsync(f.call(`/${phase}-crash`));
      t.true(f.gateway.logs.some((line) => line.includes(`failed to run ${phase}_filter_by_lua*`) && line.includes(`probe ${phase}_filter crashed on purpose`)));
      t.true(f.gateway.logs.some((line) => line.includes(`log phase ran after ${phase}-crash`)));
      t.is((await f.call('/observe/x')).status, 200, 'the gateway keeps serving');
    });
  }

  test(`[${vm}] ngx.var is refused with a message pointing at the PDK`, async (t) => {
    const f = t.context.fixtures[vm];
    const response = await f.call('/ngx-var');
    t.is(response.status, 500);
    t.true(f.gateway.logs.some((line) => line.includes('ngx.var is not available in the local gateway')));
  });

  test(`[${vm}] kong.ctx state stays with its request when many are in flight at once`, async (t) => {
    const f = t.context.fixtures[vm];
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => f.call(`/observe/x?q=${i}`)));
    responses.forEach((response, i) => t.is(response.headers.get('x-probe-query'), String(i)));
  });

  test(`[${vm}] a runaway allocation fails the request with a 500 at the VM's memory limit; the gateway keeps serving`, async (t) => {
    const f = t.context.fixtures[vm];
    const before = f.gateway.logs.length;
    const response = await f.call('/hog');
    t.is(response.status, 500);
    const logged = f.gateway.logs.slice(before);
    t.true(logged.some((line) => line.includes('not enough memory')), logged.join('\n'));
    // The failed request's garbage is collected at once: the requests after it have the memory.
    for (let i = 0; i < 5; i++) t.is((await f.call('/observe/x')).status, 200);
  });

  test(`[${vm}] unbounded recursion fails the request with a 500; the gateway keeps serving`, async (t) => {
    const f = t.context.fixtures[vm];
    const before = f.gateway.logs.length;
    const response = await f.call('/recurse');
    t.is(response.status, 500);
    // LuaJIT stops at its stack limit (65,500 slots); Lua 5.4's (1,000,000 slots) lies beyond
    // this test's 32 MiB, so there the memory limit stops it first.
    const expected = vm === 'luajit' ? 'stack overflow' : 'not enough memory';
    const logged = f.gateway.logs.slice(before);
    t.true(logged.some((line) => line.includes(expected)), logged.join('\n'));
    t.is((await f.call('/observe/x')).status, 200);
  });

  test(`[${vm}] an op the bridge does not define is an error, not ignored`, async (t) => {
    const f = t.context.fixtures[vm];
    const response = await f.call('/bad-op');
    t.is(response.status, 500);
    t.true(f.gateway.logs.some((line) => line.includes("unknown op 'zz'")), f.gateway.logs.join('\n'));
  });
}

// Lua 5.1 semantics where the two VMs differ: %z in patterns, the bit library.
// kong/api/routes/kong.lua (3.9.1): GET / reports lua_version as `jit and jit.version or _VERSION`.
test('[luajit] plugins run on OpenResty\'s LuaJIT 2.1 with Lua 5.1 semantics', async (t) => {
  const response = await t.context.fixtures.luajit.call('/lua51');
  t.is(response.headers.get('x-probe-vm'), 'LuaJIT 2.1.0-beta3|2|table');
  t.is((await t.context.fixtures.luajit.admin('/')).body.lua_version, 'LuaJIT 2.1.0-beta3');
});

test('[wasmoon] the fallback VM is Lua 5.4', async (t) => {
  const response = await t.context.fixtures.wasmoon.call('/lua51');
  t.is(response.headers.get('x-probe-vm'), 'Lua 5.4|2|nil');
  t.is((await t.context.fixtures.wasmoon.admin('/')).body.lua_version, 'Lua 5.4');
});

test('a config record declared with fields = {} loads as a record without fields, as Kong reads it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-plugins-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'bare'));
  writeFileSync(join(dir, 'bare/handler.lua'), 'return { PRIORITY = 1, VERSION = "0.1.0" }\n');
  writeFileSync(
    join(dir, 'bare/schema.lua'),
    'return { name = "bare", fields = { { config = { type = "record", fields = {} } } } }\n',
  );
  const lua = await LuaPluginHost.create({ sharedDicts: [], nodeId: 'test' });
  t.deepEqual(lua.loadPlugin(dir, 'bare').configFields, []);
});
