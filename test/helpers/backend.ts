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

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** fetch + JSON body (or the raw text when it is not JSON). */
export async function request(url: string, init: RequestInit & { json?: unknown } = {}): Promise<JsonResponse> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const response = await fetch(url, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text so the assertion shows it
  }
  return { status: response.status, headers: response.headers, body };
}
