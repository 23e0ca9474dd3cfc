// What a test file's `import test from 'ava'` gives it in its bundle (scripts/tools/module-bundles.js
// points the import here, with the file's URL). In a worker of its own, ava's `test` as it is. In
// a worker it shares (a group of test/worker-groups/, or the portable files in
// test/deck/sync-then-e2e.test.ts), a `test` that puts the file's name ahead of each title it
// registers: the report names each test's file, and two files' titles cannot collide.
import { relative } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import test, { type TestFn } from 'ava';

const TEST_DIR = fileURLToPath(new URL('../', import.meta.url));

/** ava's `test`, or a chain of it whose titles start with `prefix › `. */
function prefixing<Chain extends object>(chain: Chain, prefix: string): Chain {
  return new Proxy(chain, {
    apply: (target, self, args: unknown[]) =>
      Reflect.apply(target as (...args: unknown[]) => unknown, self, typeof args[0] === 'string' ? [`${prefix} › ${args[0]}`, ...args.slice(1)] : args),
    // test.serial, test.before.always…: the chain's links are functions too
    get: (target, key) => {
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? prefixing(value, prefix) : value;
    },
  });
}

/** The `test` the test file at `fileUrl` registers its tests with. */
export function titledFor(fileUrl: string): TestFn {
  if (test.meta.file === fileUrl) return test;
  return prefixing(test, relative(TEST_DIR, fileURLToPath(fileUrl)).replace(/\.test\.ts$/, ''));
}
