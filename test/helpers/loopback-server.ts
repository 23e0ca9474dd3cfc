import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from './poll.ts';
import { freePort } from '../../packages/node-runtime/free-port.js';

export interface LoopbackServerSpec {
  /** What the errors call it: `Prometheus`. */
  name: string;
  /** The Debian binary: `/usr/bin/prometheus`. */
  bin: string;
  /** Files written into the server's own temporary directory before it starts (name → text). */
  files: Record<string, string>;
  /** Its arguments, given its directory and the free loopback port it is to listen on. */
  args(dir: string, port: number): string[];
}

export interface RunningLoopbackServer {
  dir: string;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** What it wrote to stdout and stderr so far. */
  output: () => string;
  /** SIGTERM, waits for the exit, removes its directory. */
  dispose: () => Promise<void>;
}

/**
 * Starts a server binary in its own temporary directory on a free loopback port and waits until
 * GET /-/ready answers 2xx (Prometheus's and Alertmanager's readiness endpoint); if it exits first,
 * the error carries its output.
 */
export async function startLoopbackServer(spec: LoopbackServerSpec): Promise<RunningLoopbackServer> {
  const dir = mkdtempSync(join(tmpdir(), `${spec.name.toLowerCase()}-`));
  for (const [name, text] of Object.entries(spec.files)) writeFileSync(join(dir, name), text);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(spec.bin, spec.args(dir, port), { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const dispose = async () => {
    if (!gone) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await pollUntil(`${spec.name} ready at ${url}`, async () => {
      if (gone) throw new Error(`${spec.name} exited:\n${log}`);
      return fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
    });
  } catch (error) {
    await dispose();
    throw error;
  }
  return { dir, port, url, output: () => log, dispose };
}
