import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, type AppOptions, type RunningBackend } from '../../backend/src/index.ts';

export interface TestBackend extends RunningBackend {
  dataDir: string;
  /** Closes the server and removes its data directory. */
  dispose(): Promise<void>;
}

/**
 * A real backend on an ephemeral loopback port with its own SQLite file, or on the PostgreSQL
 * database `databaseUrl` names (several backends may share one, as replicas do).
 */
export async function startTestBackend({ databaseUrl, app }: { databaseUrl?: string; app?: Omit<AppOptions, 'db'> } = {}): Promise<TestBackend> {
  const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-'));
  const backend = await startBackend({ host: '127.0.0.1', port: 0, dataDir, databaseUrl }, app);
  return {
    ...backend,
    dataDir,
    async dispose() {
      await backend.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { request, type JsonResponse } from './json-request.ts';
