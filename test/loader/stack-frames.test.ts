import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { parse } from 'yaml';
import { pollUntil } from '../helpers/poll.ts';

// A worker imports its test file's bundle (scripts/tools/module-bundles.js), whose inline source
// map keeps our own modules' mappings only (scripts/tools/own-mappings.js).
const stackOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as Error).stack ?? '';
  }
  throw new Error('it did not throw');
};

test("a failure's stack names the repository's .ts files and lines", async (t) => {
  const source = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  const line = source.findIndex((text) => text.trim().startsWith('throw new Error(`at a known line`)')) + 1;
  const stack = stackOf(() => {
    throw new Error(`at a known line`);
  });
  t.true(stack.includes(`test/loader/stack-frames.test.ts:${line}:`), stack);
  // a helper's frame, in a chunk the bundles share
  const error = await t.throwsAsync(pollUntil('never', async () => false, { timeoutMs: 1 }));
  t.regex(error.stack ?? '', /test\/helpers\/poll\.ts:\d+:\d+/);
});

test("a package's frame names the bundle's file and line, not a module of ours", (t) => {
  const stack = stackOf(() => parse('a: [\n'));
  const [, frame] = stack.split('\n    at ');
  t.regex(frame ?? '', /node_modules\/\.cache\/animal-store\/bundles\/.+\.mjs:\d+:\d+\)$/, stack);
});
