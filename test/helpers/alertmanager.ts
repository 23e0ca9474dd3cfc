import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { pollUntil } from './poll.ts';

// A real Alertmanager for the tests: Debian's prometheus-alertmanager (0.25), the line compose runs.

const ALERTMANAGER_BIN = '/usr/bin/prometheus-alertmanager';
export const AMTOOL_BIN = '/usr/bin/amtool';

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RunningAlertmanager {
  /** http://127.0.0.1:<port>, what Prometheus's `alerting` targets (as host:port). */
  url: string;
  target: string;
  output(): string;
  dispose(): Promise<void>;
}

/**
 * Starts Alertmanager with `config` (alertmanager.yml as an object) on a free loopback port, with
 * its storage and config in a temporary directory and no cluster listener; waits for /-/ready and
 * stops it (SIGTERM, then waits for the exit) on dispose.
 */
export async function startAlertmanager(config: Record<string, unknown>): Promise<RunningAlertmanager> {
  const dir = mkdtempSync(join(tmpdir(), 'alertmanager-'));
  writeFileSync(join(dir, 'alertmanager.yml'), stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    ALERTMANAGER_BIN,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
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
    await pollUntil(`Alertmanager ready at ${url}`, async () => {
      if (gone) throw new Error(`Alertmanager exited:\n${log}`);
      return fetch(`${url}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
    });
  } catch (error) {
    await dispose();
    throw error;
  }
  return { url, target: `127.0.0.1:${port}`, output: () => log, dispose };
}
