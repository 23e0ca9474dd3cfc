// `npm test` (after its pretest): the stale test bundles built first, then lint and the type-check
// beside ava, so that ava's workers have the cores eslint and tsc leave them. Arguments go to
// ava (`npm test -- test/scripts/deck-env.test.ts`). Exits non-zero when any of them fails.
//
// Output: ava's lines pass through as they come; lint's and the type-check's are each kept and
// printed in one block when it ends, between two of ava's lines; ava's closing lines (from its last
// "─") are held until everything has ended and printed last, so its totals close the output as
// scripts/ci/ava-totals.sh and .ci/run expect. A step other than ava that fails says so in a line
// of its own just before them, "npm test: <step> failed (exit N)", which ava-totals.sh counts as a
// failure (ava's own are in its totals).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { bundleStale } from '../../test/loader/bundle-all.js';

const AVA_CLI = fileURLToPath(new URL('../../node_modules/ava/entrypoints/cli.mjs', import.meta.url));
// Node ≥ 22.1 keeps the compiled code of the modules it loads there and reuses it in the next
// process (ava's workers, eslint, tsc, the stacks' processes, each loading the same modules again);
// Node 20 ignores it. A reader's own NODE_COMPILE_CACHE is left as it is.
process.env.NODE_COMPILE_CACHE ??= fileURLToPath(new URL('../../node_modules/.cache/animal-store/compile-cache', import.meta.url));
const avaArgs = process.argv.slice(2);
const children = new Set();

/** Runs a command with its output kept; resolves to { code, output }. */
function runQuietly(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.on('error', (error) => chunks.push(Buffer.from(`${error.message}\n`)));
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString() });
    });
  });
}

/** Calls onLine for each whole line of a stream, the newline included. */
function eachLine(stream, onLine) {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (text) => {
    const lines = (partial + text).split(/(?<=\n)/);
    partial = lines.at(-1).endsWith('\n') ? '' : lines.pop();
    lines.forEach(onLine);
  });
  stream.on('end', () => partial && onLine(partial + '\n'));
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exit(1);
  });
}

/** ava's closing lines (from its last "─"), printed once every step has ended. */
let avaClosing = [];
/** "npm test: <step> failed (exit N)" of each step but ava. */
const failures = [];

/** Prints a step's kept output in one block, and notes its failure for the end. */
function report(step, { code, output }) {
  if (output.trim() !== '') process.stdout.write(`\n── ${step} ──\n${output.replace(/\n?$/, '\n')}`);
  if (code !== 0) failures.push(`npm test: ${step} failed (exit ${code})\n`);
}

/** Runs ava with this script's arguments, its lines passed through (the closing ones held); resolves to its exit code. */
function runAva() {
  return new Promise((resolve) => {
    // ava's colours are for a terminal; its output is piped through this script.
    const env = process.stdout.isTTY && !('FORCE_COLOR' in process.env) ? { ...process.env, FORCE_COLOR: '1' } : process.env;
    // ava's own command-line entry, run by this node: found whether or not npm put node_modules/.bin on the PATH
    const child = spawn(process.execPath, [AVA_CLI, ...avaArgs], { stdio: ['inherit', 'pipe', 'pipe'], env });
    children.add(child);
    eachLine(child.stdout, (line) => {
      // eslint-disable-next-line no-control-regex -- ava's colour codes
      if (line.replace(/\x1b\[[0-9;]*m/g, '').trim() === '─') {
        process.stdout.write(avaClosing.join(''));
        avaClosing = [line];
      } else if (avaClosing.length > 0) {
        avaClosing.push(line);
      } else {
        process.stdout.write(line);
      }
    });
    eachLine(child.stderr, (line) => process.stderr.write(line));
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const step = (name, command, args) => runQuietly(command, args).then((result) => (report(name, result), result.code));
// The stale test bundles first, on both cores (esbuild's), before lint and the type-check hold
// them: ava's first worker waits for its bundle, while lint and the type-check end long before
// ava does (a clean clone: ~3 s alone, 8-15 s beside them). ava's start then finds them fresh. A
// bundle esbuild cannot build fails again there, and ava says why.
await bundleStale(avaArgs).catch(() => undefined);
const lint = step('npm run lint', 'npm', ['run', '--silent', 'lint']);
const typecheck = step('npm run typecheck', 'npm', ['run', '--silent', 'typecheck']);
// ava's failures are in its own totals: no line of this script's for them. ava builds the stale
// test bundles itself at its start (ava.config.js).
const tests = runAva();

const [, , avaCode] = await Promise.all([lint, typecheck, tests]);
// ava ended before its totals (its configuration failed: a bundle that esbuild cannot build)
if (avaCode !== 0 && avaClosing.length === 0) failures.push(`npm test: ava failed (exit ${avaCode})\n`);
process.stdout.write(failures.join('') + avaClosing.join(''));
process.exitCode = failures.length > 0 || avaCode !== 0 ? 1 : 0;
