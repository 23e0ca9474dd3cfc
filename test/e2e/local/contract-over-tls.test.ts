import { join } from 'node:path';
import test from 'ava';
import { REPO_ROOT, runToEnd } from '../../helpers/process.ts';

// The contract suite (test/e2e/portable/contract.test.ts, headers-and-errors.test.ts) over TLS:
// E2E_TLS=1 makes its target the local stack as production runs kong.yml, https only, with every
// call over https trusting the node's default certificates (test/helpers/target.ts); plain HTTP
// would be answered 426. The whole portable suite runs so with `npm run test:e2e:tls`.
test('the contract suite passes over TLS, on a gateway that refuses plain HTTP', async (t) => {
  const ava = join(REPO_ROOT, 'node_modules/ava/entrypoints/cli.mjs');
  const files = ['test/e2e/portable/contract.test.ts', 'test/e2e/portable/headers-and-errors.test.ts'];
  const result = await runToEnd(process.execPath, [ava, ...files], { ...process.env, E2E_TLS: '1' });
  t.is(result.code, 0, `${result.stdout}\n${result.stderr}`);
  t.regex(result.stdout, /\d+ tests? passed/);
  t.notRegex(result.stdout, /failed|skipped|todo/);
});
