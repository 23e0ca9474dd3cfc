// `npm test` runs this before ava: the bundles of every test file that are missing or stale, built
// in one esbuild run (scripts/tools/module-bundles.js, bundleAll) rather than one per worker.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bundleAll, REPO_ROOT } from '../../scripts/tools/module-bundles.js';

/** Modules the tests import by URL at run time, each then a bundle of its own (test/helpers/target.ts). */
const IMPORTED_AT_RUN_TIME = ['test/helpers/stack.ts'];

const testFiles = readdirSync(join(REPO_ROOT, 'test'), { recursive: true })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => join(REPO_ROOT, 'test', file));
await bundleAll([...testFiles, ...IMPORTED_AT_RUN_TIME.map((file) => join(REPO_ROOT, file))]);
