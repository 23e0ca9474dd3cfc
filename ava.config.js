// ava's configuration (was package.json's "ava"), here for sortTestFiles, which takes a function.

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
];
const rank = (file) => {
  const index = SLOWEST_FIRST.findIndex((part) => file.includes(part));
  return index === -1 ? SLOWEST_FIRST.length : index;
};

export default {
  extensions: { ts: 'module' },
  // Each test file runs as one esbuild bundle (test/loader/bundle-hooks.js), not through tsx. The
  // hooks are registered once ava's own modules are loaded (require, not --import): node 20 sends
  // every ES module loaded after them through the hooks' thread, ~90 of ava's, ~0.17 CPU-s a worker.
  require: ['./test/loader/register.js', './test/loader/stop-children-on-sigterm.js'],
  files: ['test/**/*.test.ts'],
  timeout: '60s',
  workerThreads: false,
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b),
};
