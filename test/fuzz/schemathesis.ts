import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** Pinned: a new Schemathesis release adds checks and generators, which is a change to review. */
export const SCHEMATHESIS_VERSION = '4.32.5';

const run = promisify(execFile);

/** ~/.cache/animal-store (or $XDG_CACHE_HOME/animal-store): tools the project builds, outside the repository. */
function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'animal-store');
}

/** Where `st` runs: it writes .schemathesis/ (its case cache) into its working directory. */
export function stateDir(): string {
  const dir = join(cacheDir(), 'schemathesis-state');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The `st` command of Schemathesis SCHEMATHESIS_VERSION, installed from PyPI into a venv of its
 * own on first use. A venv cannot be moved (its scripts name their interpreter by absolute path),
 * so it is built in place and marked complete last: an interrupted install is rebuilt.
 */
export async function ensureSchemathesis(log: (line: string) => void = console.error): Promise<string> {
  const venv = join(cacheDir(), `schemathesis-${SCHEMATHESIS_VERSION}`);
  const complete = join(venv, '.complete');
  const st = join(venv, 'bin', 'st');
  if (existsSync(complete)) return st;
  log(`installing schemathesis ${SCHEMATHESIS_VERSION} into ${venv} (once)`);
  rmSync(venv, { recursive: true, force: true });
  mkdirSync(cacheDir(), { recursive: true });
  await run('python3', ['-m', 'venv', venv]).catch((error: Error) => {
    throw new Error(`python3 -m venv failed (on Debian: apt-get install python3-venv): ${error.message}`);
  });
  await run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`], { maxBuffer: 16 * 1024 * 1024 });
  await run(st, ['--version']);
  writeFileSync(complete, `${SCHEMATHESIS_VERSION}\n`);
  return st;
}
