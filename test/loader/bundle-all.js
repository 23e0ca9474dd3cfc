// `npm test` runs this before ava: the bundles of every test file that are missing or stale, built
// in one esbuild run (scripts/tools/module-bundles.js, bundleAll) rather than one per worker, and
// those of the entry points the tests start as processes, in another, rather than one per process
// (two workers starting `npm start` at once would each build the backend's and the portal's).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleAll, REPO_ROOT } from '../../scripts/tools/module-bundles.js';

/** Modules the tests import by URL at run time, each then a bundle of its own (test/helpers/target.ts). */
const IMPORTED_AT_RUN_TIME = ['test/helpers/stack.ts'];

/** Entry points run as processes besides package.json's scripts': `npm start`'s children, the client example. */
const STARTED_AS_PROCESSES = ['backend/src/main.ts', 'portal/src/main.ts', 'gateway/client/example.ts'];

const testFiles = readdirSync(join(REPO_ROOT, 'test'), { recursive: true })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => join(REPO_ROOT, 'test', file));
await bundleAll([...testFiles, ...IMPORTED_AT_RUN_TIME.map((file) => join(REPO_ROOT, file))]);

const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
const scriptEntries = Object.values(scripts).flatMap((script) => [...script.matchAll(/run-bundled\.js (\S+\.ts)/g)].map((match) => match[1]));
await bundleAll([...new Set([...scriptEntries, ...STARTED_AS_PROCESSES])].map((file) => join(REPO_ROOT, file)), 'process');
