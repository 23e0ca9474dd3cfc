import { createServer, type Server } from 'node:http';
import type { Knex } from 'knex';
import { listenOwningDatabase } from '../../packages/node-runtime/http-server.js';
import { createApp, type AppOptions } from './app.ts';
import type { BackendConfig } from './config.ts';
import { openDatabase } from './db/connect.ts';
import { answerClientError } from './http/client-error.ts';
import { schedulePurge } from './idempotency/expiry.ts';
import { IdempotencyStore } from './idempotency/idempotency-store.ts';

/** How often expired Idempotency-Key records are deleted (lookups ignore them meanwhile). */
const PURGE_INTERVAL_MS = 10 * 60 * 1000;

export interface RunningBackend {
  server: Server;
  db: Knex;
  url: string;
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>;
}

/**
 * More than the gateway lets through (nginx's 4 x 8 KiB header buffers, plus the headers Kong adds
 * upstream), so a request the gateway accepted is never refused here for its size; Node's default
 * is 16 KiB.
 */
const MAX_HEADER_SIZE = 64 * 1024;

export async function startBackend(
  config: BackendConfig,
  appOptions: Omit<AppOptions, 'db'> = {},
): Promise<RunningBackend> {
  const db = await openDatabase({ dataDir: config.dataDir, url: config.databaseUrl });
  const now = appOptions.clock ?? (() => new Date());
  const purge = schedulePurge(new IdempotencyStore(db), { now: () => now().getTime(), intervalMs: PURGE_INTERVAL_MS });
  const { app, routesAt } = createApp({ db, ...appOptions });
  const server = createServer({ maxHeaderSize: MAX_HEADER_SIZE }, app.callback());
  server.on('clientError', (error, socket) => answerClientError(error, socket, routesAt));
  server.keepAliveTimeout = 65_000; // longer than the gateway's idle upstream keep-alive
  const served = await listenOwningDatabase(server, db, config, () => purge.stop());
  return { server, db, ...served };
}
