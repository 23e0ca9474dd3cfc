import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const POLL_MS = 500;

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid recorded in a lock directory, or undefined when it has none (yet) or it is unreadable. */
function holder(lock: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `build` while holding `<dir>/.lock` (mkdir is atomic), so that two commands needing the same
 * cached build (two `npm test`s, a test and `npm start`) compile it once instead of side by side on
 * a 2-core machine. A second caller waits until `done()` says the first finished, or until the
 * holder's process is gone (a killed build leaves a stale lock, which is taken over).
 */
export function withBuildLock<T>(dir: string, done: () => T | undefined, build: () => T, log: (line: string) => void): T {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, '.lock');
  let told = false;
  for (;;) {
    const finished = done();
    if (finished !== undefined) return finished;
    try {
      mkdirSync(lock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = holder(lock);
      if (pid !== undefined && !alive(pid)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (!told) log(`waiting for the build already running${pid ? ` (pid ${pid})` : ''} in ${dir}`);
      told = true;
      sleep(POLL_MS);
      continue;
    }
    try {
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return done() ?? build();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}
