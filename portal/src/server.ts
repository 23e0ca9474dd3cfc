import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { createPortalApp, type PortalAppOptions } from './app.ts';
import type { PortalConfig } from './config.ts';
import { openPortalDatabase } from './db/connect.ts';
import { SessionStore } from './sessions.ts';

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
  const server = createServer(createPortalApp({ db, config, ...options }).callback());
  server.keepAliveTimeout = 65_000; // longer than the gateway's idle upstream keep-alive
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, resolve);
    });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  // expired sessions are refused on sight; this only keeps the table small
  const sessions = new SessionStore(db);
  const now = options.clock ?? Date.now;
  const purge = setInterval(() => void sessions.purgeExpired(now()).catch(() => undefined), PURGE_INTERVAL_MS);
  purge.unref();
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  let closing: Promise<void> | undefined;
  return {
    server,
    db,
    url: `http://${host}:${port}`,
    close() {
      closing ??= (async () => {
        clearInterval(purge);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await db.destroy();
      })();
      return closing;
    },
  };
}
