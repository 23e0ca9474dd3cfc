import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withBuildLock } from '../../scripts/tools/build-lock.ts';

const fresh = (t: ExecutionContext): string => {
  const dir = mkdtempSync(join(tmpdir(), 'build-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

test('the first caller builds, and leaves no lock behind', (t) => {
  const dir = fresh(t);
  const result = join(dir, 'result');
  const built = withBuildLock(dir, () => (existsSync(result) ? 'cached' : undefined), () => (writeFileSync(result, 'x'), 'built'), () => undefined);
  t.is(built, 'built');
  t.false(existsSync(join(dir, '.lock')));
  t.is(withBuildLock(dir, () => (existsSync(result) ? 'cached' : undefined), () => 'built again', () => undefined), 'cached');
});

test('a lock whose process is gone is taken over', (t) => {
  const dir = fresh(t);
  mkdirSync(join(dir, '.lock'));
  writeFileSync(join(dir, '.lock', 'pid'), '2147483646');
  t.is(withBuildLock(dir, () => undefined, () => 'built', () => undefined), 'built');
});

test('a second caller waits for the running build and uses its result', async (t) => {
  const dir = fresh(t);
  const result = join(dir, 'result');
  // Another process holds the lock and finishes its build a little later.
  const other = spawn('sh', ['-c', `sleep 0.3; echo theirs > ${result}`], { stdio: 'ignore' });
  mkdirSync(join(dir, '.lock'));
  writeFileSync(join(dir, '.lock', 'pid'), String(other.pid));
  const lines: string[] = [];
  const got = withBuildLock(dir, () => (existsSync(result) ? readFileSync(result, 'utf8').trim() : undefined), () => 'ours', (line) => lines.push(line));
  t.is(got, 'theirs');
  t.is(lines.length, 1);
  t.regex(lines[0]!, new RegExp(`waiting for the build already running \\(pid ${other.pid}\\)`));
  await new Promise((resolve) => other.once('exit', resolve));
});
