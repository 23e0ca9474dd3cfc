import test from 'ava';
import { findSharedFile } from '../../scripts/tools/shared-dir.ts';

const reported = new Set<string>();

/**
 * The path of `../shared/<relative>`, or undefined when it is absent: a user's clone has no
 * ../shared. Absent, the caller registers none of the tests that read it, and this registers one
 * skipped test whose title names the file: the suite's one kind of skip, a conditional one for an
 * optional input. Under CI (CI=true), whose clone has ../shared, absent is a failing test instead.
 */
export function sharedFile(relative: string): string | undefined {
  const path = findSharedFile(relative);
  if (path !== undefined || reported.has(relative)) return path;
  reported.add(relative);
  if (process.env.CI === 'true') {
    test(`../shared/${relative} is there (CI clones with ../shared beside the repository)`, (t) => t.fail('not found'));
  } else {
    test.skip(`../shared/${relative} not found: the tests and checks that read it are skipped`, () => {});
  }
  return undefined;
}
