import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import type { LuaVmKind } from '../../gateway/local/lua/vm/lua-vm.ts';
import { openLuaVm } from '../../gateway/local/lua/vm/open-lua-vm.ts';
import { REPO_ROOT } from '../helpers/process.ts';

// Production Kong runs the plugin on OpenResty's LuaJIT; the local gateway on LuaJIT too (the
// native addon) or, where that is not built, on Lua 5.4 (wasmoon). The same cases
// (test/lua/edge_cases.lua, with a small PDK stub) must pass on all of them.
const MODULES: Record<string, string> = {
  json: 'gateway/local/lua/json.lua',
  pdk_stub: 'test/lua/pdk_stub.lua',
  edge_cases: 'test/lua/edge_cases.lua',
  handler: 'gateway/plugins/animal-store-edge/handler.lua',
};
const RUNNER = 'test/lua/run.lua';
const SUMMARY = /^(\d+) passed, (\d+) failed$/m;

test('the edge plugin cases pass under the luajit command (OpenResty\'s LuaJIT, as production Kong)', (t) => {
  const run = spawnSync('luajit', [RUNNER], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (run.error) t.fail(`luajit is not installed (.ci/run installs the Debian package luajit2): ${run.error.message}`);
  t.is(run.status, 0, run.stdout + run.stderr);
  const [, passed, failed] = SUMMARY.exec(run.stdout)!;
  t.is(failed, '0');
  t.true(Number(passed) >= 10);
});

for (const kind of ['luajit', 'wasmoon'] as const satisfies readonly LuaVmKind[]) {
  test(`the same cases pass in the gateway's ${kind} VM`, async (t) => {
    const vm = await openLuaVm({ kind });
    t.teardown(() => vm.close());
    const output: string[] = [];
    vm.setFunction('print', (line) => {
      output.push(String(line));
      return undefined;
    });
    for (const [name, file] of Object.entries(MODULES)) vm.preload(name, `@${file}`, readFileSync(join(REPO_ROOT, file), 'utf8'));
    vm.run(`@${RUNNER}`, readFileSync(join(REPO_ROOT, RUNNER), 'utf8'));
    const summary = output.find((line) => SUMMARY.test(line));
    t.truthy(summary, output.join('\n'));
    const [, passed, failed] = SUMMARY.exec(summary!)!;
    t.is(failed, '0', output.join('\n'));
    t.true(Number(passed) >= 10);
  });
}
