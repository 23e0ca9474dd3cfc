import { readdirSync, readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface SpawnedProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the first match of `pattern` in stdout+stderr. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * How package.json's scripts run a TypeScript entry point (`npm start`, `npm run consumers`…): as
 * the esbuild bundle of its sources, built when stale (scripts/tools/run-bundled.js), ~1 CPU-s
 * less per start than through tsx (docs/testing.md).
 */
export const RUN_BUNDLED = join(REPO_ROOT, 'scripts/tools/run-bundled.js');

/** Runs a TypeScript entry point of this repository as `npm start` runs its own. */
export function spawnTs(entry: string, args: string[], env: NodeJS.ProcessEnv): SpawnedProcess {
  return spawnNode([RUN_BUNDLED, entry, ...args], env);
}

/** Runs node with exactly `nodeArgs` in the repository root. */
export function spawnNode(nodeArgs: string[], env: NodeJS.ProcessEnv): SpawnedProcess {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => text,
    exited,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = text.match(pattern);
          if (match) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${pattern}; output so far:\n${text}`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then(() => {
          if (listeners.has(check)) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`process exited before ${pattern}; output:\n${text}`));
          }
        });
        check();
      });
    },
  };
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` in the repository root to its end and collects what it wrote. */
export function runToEnd(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      // 'exit' can come before the pipes are drained (decK's lint output was lost so); 'close'
      // comes once they are, unless a process the child left behind still holds them.
      const done = () => resolve({ code, stdout, stderr });
      const drained = setTimeout(done, 2000);
      child.once('close', () => {
        clearTimeout(drained);
        done();
      });
    });
  });
}

/** Running: neither gone nor a zombie (which an init that does not reap may leave). */
export function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A process and all its descendants (from /proc): the gateway is its control plane and nginx's processes. */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // the process ended while we looked
    }
  }
  const tree: number[] = [];
  const visit = (p: number) => {
    tree.push(p);
    for (const child of children.get(p) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

/** Resident memory of a process and its descendants, in MB (VmRSS summed; shared pages count per process). */
export function treeRssMb(pid: number): number {
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return Math.round(kb / 1024);
}
