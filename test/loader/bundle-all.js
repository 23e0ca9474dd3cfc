// ava.config.js runs this at ava's start, before any worker: the bundles of the test files ava is
// to run that are missing or stale, built in one esbuild run (scripts/tools/module-bundles.js,
// bundleAll) rather than one per worker, and those of the entry points the tests start as
// processes, in another, rather than one per process (two workers starting `npm start` at once
// would each build the backend's and the portal's). A worker then imports its test file's bundle
// as it is (./import-bundles.js): no module hooks, no loader thread.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bundleAll, REPO_ROOT } from '../../scripts/tools/module-bundles.js';

/** Modules the tests import by URL at run time, each then a bundle of its own (test/helpers/target.ts). */
const IMPORTED_AT_RUN_TIME = ['test/helpers/stack.ts'];

/** Entry points run as processes besides package.json's scripts': `npm start`'s children, the client example. */
const STARTED_AS_PROCESSES = ['backend/src/main.ts', 'portal/src/main.ts', 'gateway/client/example.ts'];

const testFilesUnder = (directory) =>
  readdirSync(directory, { recursive: true })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => join(directory, file));

/**
 * The test files named on ava's command line (`.ts` files, `file:line`, directories), or every test
 * file when it names none or names what is not a path (a glob, an option's value such as `3s`):
 * building more than needed costs time, building less would test stale code. Other files (an
 * option's value such as `--config`'s) are not test files.
 */
export function testFilesOf(args) {
  const positional = args.filter((arg) => !arg.startsWith('-')).map((arg) => resolve(arg.replace(/:[\d,-]+$/, '')));
  if (!positional.every((path) => existsSync(path))) return testFilesUnder(join(REPO_ROOT, 'test'));
  const named = positional.flatMap((path) => (statSync(path).isDirectory() ? testFilesUnder(path) : path.endsWith('.ts') ? [path] : []));
  return named.length > 0 ? named : testFilesUnder(join(REPO_ROOT, 'test'));
}

/** Builds the stale bundles the run of ava with these command-line arguments needs. */
export async function bundleStale(args) {
  await bundleAll([...testFilesOf(args), ...IMPORTED_AT_RUN_TIME.map((file) => join(REPO_ROOT, file))]);
  const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  const scriptEntries = Object.values(scripts).flatMap((script) => [...script.matchAll(/run-bundled\.js (\S+\.ts)/g)].map((match) => match[1]));
  await bundleAll([...new Set([...scriptEntries, ...STARTED_AS_PROCESSES])].map((file) => join(REPO_ROOT, file)), 'process');
}
