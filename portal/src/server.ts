import { createServer, type Server } from 'node:http';
import type { Knex } from 'knex';
import { listenOwningDatabase } from '../../packages/node-runtime/http-server.js';
import { createPortalApp, type PortalAppOptions } from './app.ts';
import type { PortalConfig } from './config.ts';
import { openPortalDatabase } from './db/connect.ts';
import { isPortalConsumer } from './keys.ts';
import { SessionStore } from './sessions.ts';
import { usageCharts } from './usage-charts.ts';

const PURGE_INTERVAL_MS = 10 * 60 * 1000;

export interface RunningPortal {
  server: Server;
  db: Knex;
  url: string;
  close(): Promise<void>;
}

/** Opens the portal's store and serves the portal on config.host:config.port (0: any free port). */
export async function startPortal(config: PortalConfig, options: Omit<PortalAppOptions, 'db' | 'config'> = {}): Promise<RunningPortal> {
  const db = await openPortalDatabase(config.dataDir);
  const charts = options.charts ?? usageCharts(config, options.clock ?? Date.now, isPortalConsumer);
  const server = createServer(createPortalApp({ db, config, ...options, charts }).callback());
  server.keepAliveTimeout = 65_000; // longer than the gateway's idle upstream keep-alive
  const served = await listenOwningDatabase(server, db, config, () => {
    clearInterval(purge);
    charts.stop();
  });
  charts.start();
  // expired sessions are refused on sight; this only keeps the table small
  const sessions = new SessionStore(db);
  const now = options.clock ?? Date.now;
  const purge = setInterval(() => void sessions.purgeExpired(now()).catch(() => undefined), PURGE_INTERVAL_MS);
  purge.unref();
  return { server, db, ...served };
}
