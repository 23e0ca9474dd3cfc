// ava's configuration (was package.json's "ava"), here for sortTestFiles, which takes a function,
// and for the test bundles' build before ava starts its workers.
import process from 'node:process';
import { bundleStale } from './test/loader/bundle-all.js';
import { testFilePatterns } from './test/loader/worker-groups.js';

/**
 * The files and groups that take longest, longest first (measured in a whole run at four workers,
 * docs/testing.md, "Four workers"): a long one started last leaves the other workers' cores idle
 * until it ends. The rest follow in name order.
 */
const SLOWEST_FIRST = [
  'test/docs/runnable-commands.',
  'test/worker-groups/deck.',
  'test/worker-groups/portal.',
  'test/worker-groups/clusters.',
  'test/worker-groups/scripts-cli.',
  'test/worker-groups/gateway.',
  'test/deploy/backend-build.',
  'test/deck/sync-then-e2e.',
  'test/worker-groups/e2e-local.',
  'test/worker-groups/backend.',
  'test/worker-groups/gateway-admin-api.',
  'test/portal/portal-browser.',
  'test/deploy/dashboard.',
  'test/scripts/npm-start.',
  'test/alerts/alert-flow.',
  'test/worker-groups/clients-and-deploy.',
  'test/portal/portal-replicas.',
  'test/worker-groups/gateway-proxy.',
  'test/worker-groups/data-plane-plugins.',
  'test/scripts/npm-start-cluster.',
  'test/backend/idempotency-crash.',
  'test/worker-groups/scripts.',
  'test/loader/stop-children.',
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
  // Four workers on two cores (ava's default is one per core): since the worker groups a whole
  // run at two workers kept about one core busy, its tests waiting on servers, timers and
  // processes; at four both cores stay busy (docs/testing.md, "Four workers").
  concurrency: 4,
  workerThreads: false,
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b),
};
