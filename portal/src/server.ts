import { createServer, type Server } from 'node:http';
import type { Knex } from 'knex';
import { listenOwningDatabase } from '../../packages/node-runtime/http-server.js';
import { createPortalApp, type PortalAppOptions } from './app.ts';
import type { PortalConfig } from './config.ts';
import { openPortalDatabase } from './db/connect.ts';
import { sharedCookieSecret } from './db/settings.ts';
import { InviteStore } from './invites.ts';
import { isPortalConsumer } from './keys.ts';
import { SessionStore } from './sessions.ts';
import { FailureThrottle, PER_ACCOUNT, PER_IP } from './throttle.ts';
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
  const db = await openPortalDatabase(config);
  let cookieSecret: string;
  try {
    cookieSecret = config.cookieSecret ?? (await sharedCookieSecret(db));
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const charts = options.charts ?? usageCharts(config, options.clock ?? Date.now, isPortalConsumer);
  const server = createServer(createPortalApp({ db, config: { ...config, cookieSecret }, ...options, charts }).callback());
  server.keepAliveTimeout = 65_000; // longer than the gateway's idle upstream keep-alive
  const served = await listenOwningDatabase(server, db, config, () => {
    clearInterval(purge);
    charts.stop();
  });
  charts.start();
  const purge = setInterval(() => void purgeExpired(db, (options.clock ?? Date.now)()).catch(() => undefined), PURGE_INTERVAL_MS);
  purge.unref();
  return { server, db, ...served };
}

/**
 * Expired sessions and invitations and forgotten sign-in counters are refused or reset on sight;
 * deleting them only keeps the store bounded. Every replica runs it: a DELETE twice is harmless.
 */
export async function purgeExpired(db: Knex, now: number): Promise<void> {
  const clock = () => now;
  await new SessionStore(db).purgeExpired(now);
  await new InviteStore(db).purgeExpired(now);
  await new FailureThrottle(db, 'account', PER_ACCOUNT, clock).purgeStale(now);
  await new FailureThrottle(db, 'ip', PER_IP, clock).purgeStale(now);
}
