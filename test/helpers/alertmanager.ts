import { join } from 'node:path';
import { stringify } from 'yaml';
import { startLoopbackServer } from './loopback-server.ts';

// A real Alertmanager for the tests: Debian's prometheus-alertmanager (0.25), the line compose runs.

const ALERTMANAGER_BIN = '/usr/bin/prometheus-alertmanager';
export const AMTOOL_BIN = '/usr/bin/amtool';

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
  const server = await startLoopbackServer({
    name: 'Alertmanager',
    bin: ALERTMANAGER_BIN,
    files: { 'alertmanager.yml': stringify(config) },
    args: (dir, port) => [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
    ],
  });
  return { url: server.url, target: `127.0.0.1:${server.port}`, output: server.output, dispose: server.dispose };
}
