// .ci/run ends with "N passed, N failed": scripts/ci/ava-totals.sh reads each npm test's output.
import { spawnSync } from 'node:child_process';
import test from 'ava';
import { REPO_ROOT } from '../helpers/process.ts';

function totals(output: string): string {
  const run = spawnSync('bash', ['scripts/ci/ava-totals.sh'], { cwd: REPO_ROOT, input: output, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ava-totals.sh exited ${run.status}: ${run.stderr}`);
  return run.stdout.trim();
}

test('a green run: its passed count, no failure', (t) => {
  t.is(totals('  ✔ backend › pets › lists\n  ─\n\n  464 tests passed\n'), '464 0');
});

test('failures, known failures, skips, todos and uncaught exceptions all count as failed', (t) => {
  const output = '  ✘ a › b\n  ─\n\n  2 tests failed\n  460 tests passed\n  1 known failure\n  1 test skipped\n  1 test todo\n  1 uncaught exception\n';
  t.is(totals(output), '460 6');
});

test('a run with failures prints no passed line: the passes are its ✔ lines', (t) => {
  t.is(totals('  ✔ a › one\n  ✔ a › two\n  ✘ [fail]: a › three\n  ─\n\n  1 test failed\n'), '2 1');
});

test('colours are ignored', (t) => {
  t.is(totals('  \x1b[32m12 tests passed\x1b[39m\n'), '12 0');
});

test('a run that stopped before ava (lint, tsc) is one failure', (t) => {
  t.is(totals('eslint: 3 problems\n'), '0 1');
});

test('a step beside ava that failed (scripts/tools/test.js: lint, tsc, the bundles) is one failure each', (t) => {
  t.is(totals('  ✔ a › one\nnpm test: npm run lint failed (exit 1)\n  ─\n\n  1 test passed\n'), '1 1');
  t.is(totals('npm test: npm run typecheck failed (exit 2)\nnpm test: node test/loader/bundle-all.js failed (exit 1)\n'), '0 2');
});
