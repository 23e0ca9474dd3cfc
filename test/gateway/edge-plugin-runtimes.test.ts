import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { LuaFactory } from 'wasmoon';
import { REPO_ROOT } from '../helpers/process.ts';

// Production Kong runs the plugin on LuaJIT; the local gateway on Lua 5.4 (wasmoon). The same
// cases (test/lua/edge_cases.lua, with a small PDK stub) must pass on both.
const MODULES: Record<string, string> = {
  json: 'gateway/local/lua/json.lua',
  pdk_stub: 'test/lua/pdk_stub.lua',
  edge_cases: 'test/lua/edge_cases.lua',
  handler: 'gateway/plugins/animal-store-edge/handler.lua',
};
const SUMMARY = /^(\d+) passed, (\d+) failed$/m;

test('the edge plugin cases pass under LuaJIT (the runtime of production Kong)', (t) => {
  const run = spawnSync('luajit', ['test/lua/run.lua'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (run.error) t.fail(`luajit is not installed (.ci/run installs the Debian package): ${run.error.message}`);
  t.is(run.status, 0, run.stdout + run.stderr);
  const [, passed, failed] = SUMMARY.exec(run.stdout)!;
  t.is(failed, '0');
  t.true(Number(passed) >= 10);
});

test('the same cases pass under Lua 5.4 (the local gateway\'s VM)', async (t) => {
  const lua = await new LuaFactory().createEngine({ enableProxy: false, injectObjects: false });
  t.teardown(() => lua.global.close());
  const output: string[] = [];
  lua.global.set('print', (line: string) => output.push(line));
  for (const [name, file] of Object.entries(MODULES)) {
    lua.global.set('__source', readFileSync(join(REPO_ROOT, file), 'utf8'));
    await lua.doString(`package.preload["${name}"] = assert(load(__source, "@${file}"))`);
  }
  const runner = readFileSync(join(REPO_ROOT, 'test/lua/run.lua'), 'utf8').replace(/^package\.path.*$/m, '').replace('if failed > 0 then os.exit(1) end', '');
  await lua.doString(runner);
  const summary = output.find((line) => SUMMARY.test(line));
  t.truthy(summary, output.join('\n'));
  const [, passed, failed] = SUMMARY.exec(summary!)!;
  t.is(failed, '0', output.join('\n'));
  t.true(Number(passed) >= 10);
});
