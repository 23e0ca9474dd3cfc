// `npm test` runs this before ava: the bundles of every test file that are missing or stale, built
// in one esbuild run (scripts/tools/module-bundles.js, bundleAll) rather than one per worker.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bundleAll, REPO_ROOT } from '../../scripts/tools/module-bundles.js';

const testFiles = readdirSync(join(REPO_ROOT, 'test'), { recursive: true })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => join(REPO_ROOT, 'test', file));
await bundleAll(testFiles);
