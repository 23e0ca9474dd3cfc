// A local gateway whose declarative file is empty, configured only by `deck gateway sync
// gateway/kong.yml` (./deck-synced-target.ts, imported first so that its hook runs first), passes
// the portable end-to-end suite: the Admin API writes decK makes take effect on the proxy as the
// built-in loader's do. The portable files run here, in this worker, against it (GATEWAY_URL), as
// `ava test/e2e/portable` would run them against a deployment, without a nested ava and a worker
// per file (~1 CPU-s each, docs/testing.md).
import { synced } from './deck-synced-target.ts';
import '../e2e/portable/auth.test.ts';
import '../e2e/portable/cli-flows.test.ts';
import '../e2e/portable/contract.test.ts';
import '../e2e/portable/deprecation.test.ts';
import '../e2e/portable/headers-and-errors.test.ts';
import '../e2e/portable/idempotency.test.ts';
import '../e2e/portable/pets-trailing-slash.test.ts';
import '../e2e/portable/scoped-keys.test.ts';
import { readdirSync } from 'node:fs';
import test from 'ava';
import { REPO_ROOT } from '../helpers/process.ts';

/** The portable files imported above: every one of test/e2e/portable, as `ava test/e2e/portable` runs. */
const IMPORTED = ['auth', 'cli-flows', 'contract', 'deprecation', 'headers-and-errors', 'idempotency', 'pets-trailing-slash', 'scoped-keys'];

test('every portable test file runs here', (t) => {
  const files = readdirSync(`${REPO_ROOT}test/e2e/portable`).filter((file) => file.endsWith('.test.ts'));
  t.deepEqual(files.map((file) => file.replace(/\.test\.ts$/, '')).sort(), IMPORTED);
});

// Serial, registered last: after the portable files' own hooks (their consumers deleted), as the
// nested suite had ended before.
test.serial.after.always('no Admin API or proxy errors', (t) => {
  if (!synced.stack) return;
  t.deepEqual(synced.stack.gateway.logs.filter((line) => line.startsWith('err')), [], 'no Admin API or proxy errors');
});
test.serial.after.always(async () => {
  await synced.stack?.dispose();
});
