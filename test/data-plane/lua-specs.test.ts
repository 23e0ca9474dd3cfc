import test from 'ava';
import { runLuaSpecs } from './lua-specs.ts';

// The busted specs of the data plane's Lua (test/data-plane/lua/*_spec.lua), run inside nginx:
// also `npm run test:lua`.

test('the Lua specs pass', async (t) => {
  const { code, output } = await runLuaSpecs();
  const failures = output.split('\n').filter((line) => /^not ok|^# /.test(line));
  t.deepEqual(failures, []);
  t.regex(output, /^1\.\.\d+$/m);
  t.is(code, 0, output);
});
