import { spawnSync } from 'node:child_process';
import test from 'ava';
import { REPO_ROOT } from '../helpers/process.ts';

// The edge plugin's unit cases (test/lua/edge_cases.lua, against a small PDK stub) under the
// luajit command: OpenResty's LuaJIT branch, the VM of production Kong and of the data plane.
const SUMMARY = /^(\d+) passed, (\d+) failed$/m;

test('the edge plugin cases pass under the luajit command', (t) => {
  const run = spawnSync('luajit', ['test/lua/run.lua'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (run.error) t.fail(`luajit is not installed (.ci/run installs the Debian package luajit2): ${run.error.message}`);
  t.is(run.status, 0, run.stdout + run.stderr);
  const [, passed, failed] = SUMMARY.exec(run.stdout)!;
  t.is(failed, '0');
  t.true(Number(passed) >= 10);
});
