import { join } from 'node:path';
import test from 'ava';
import { REPO_ROOT, runToEnd } from '../../helpers/process.ts';

// The contract suite (test/e2e/portable/contract.test.ts) on a gateway shared with another team:
// E2E_SHARED_KONG=1 makes its target the local stack with team-inventory's file synced in and our
// hosts set (test/helpers/target.ts). The whole portable suite runs so with `npm run test:e2e:shared`.
test('the contract suite passes with another team synced in', async (t) => {
  const ava = join(REPO_ROOT, 'node_modules/ava/entrypoints/cli.mjs');
  const result = await runToEnd(process.execPath, [ava, 'test/e2e/portable/contract.test.ts'], { ...process.env, E2E_SHARED_KONG: '1' });
  t.is(result.code, 0, `${result.stdout}\n${result.stderr}`);
  t.regex(result.stdout, /\d+ tests? passed/);
  t.notRegex(result.stdout, /failed|skipped|todo/);
});
