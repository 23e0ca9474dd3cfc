// In a run of the whole suite, each file of test/worker-groups/ runs the test files it imports in
// one ava worker, where each would otherwise start a worker of its own: a worker's start (node,
// ava, the bundle's code compiled again) is ~0.6 CPU-s a file (docs/testing.md, "Worker groups").
// The imported files are then left out of the run, so that each test runs once. Named on ava's
// command line, a file runs in its own worker as before, and a group only when it is named.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { REPO_ROOT } from '../../scripts/tools/module-bundles.js';
import { testFilesOf } from './bundle-all.js';

const GROUPS_DIR = 'test/worker-groups';

/** The files a group imports (`import '../gateway/key-auth.test.ts';`), repository-relative. */
export function membersOf(group) {
  return [...readFileSync(join(REPO_ROOT, group), 'utf8').matchAll(/^import '(\.\.?\/[^']+\.test\.ts)';$/gm)].map(([, path]) =>
    posix.join(posix.dirname(group), path),
  );
}

/** Every group file, repository-relative. */
export const groupFiles = () =>
  readdirSync(join(REPO_ROOT, GROUPS_DIR))
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => posix.join(GROUPS_DIR, file));

/** ava's `files` for a run with these command-line arguments: the groups' members left out when their group runs. */
export function testFilePatterns(args) {
  const running = new Set(testFilesOf(args).map((file) => relative(REPO_ROOT, file)));
  const members = groupFiles()
    .filter((group) => running.has(group))
    .flatMap(membersOf);
  return ['test/**/*.test.ts', ...members.map((member) => `!${member}`)];
}
