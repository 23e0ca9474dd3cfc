// ava's configuration (was package.json's "ava"), here for sortTestFiles, which takes a function,
// and for the test bundles' build before ava starts its workers.
import process from 'node:process';
import { bundleStale } from './test/loader/bundle-all.js';
import { testFilePatterns } from './test/loader/worker-groups.js';

/**
 * The files that take longest (docs/testing.md has the measured times), started first: with two
 * workers, a long file started last leaves one core idle until it ends.
 */
const SLOWEST_FIRST = [
  'test/scripts/npm-start.',
  'test/docs/runnable-commands.',
  'test/deck/',
  'test/deploy/backend-build.',
  'test/scripts/consumers-cli.',
  'test/scripts/npm-start',
  'test/cluster/',
  'test/backend/idempotency-crash.',
  'test/deploy/dashboard.',
  'test/worker-groups/',
];
const rank = (file) => {
  const index = SLOWEST_FIRST.findIndex((part) => file.includes(part));
  return index === -1 ? SLOWEST_FIRST.length : index;
};

// The stale test bundles are built here, at ava's start, before any worker (test/loader/bundle-all.js).
await bundleStale(process.argv.slice(2));

export default {
  // Each test file runs as one esbuild bundle of itself and every module of the repository it
  // imports (scripts/tools/module-bundles.js, built above), which test/loader/import-bundles.js
  // imports when ava require()s the file: no module hooks in the worker (docs/testing.md).
  extensions: { ts: 'commonjs' },
  require: ['./test/loader/import-bundles.js', './test/loader/stop-children-on-sigterm.js'],
  // every test file, but those a group of test/worker-groups/ in this run imports (test/loader/worker-groups.js)
  files: testFilePatterns(process.argv.slice(2)),
  timeout: '60s',
  workerThreads: false,
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b),
};
