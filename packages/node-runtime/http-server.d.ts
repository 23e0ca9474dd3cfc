import type { Server } from 'node:http';

export interface ServedApp {
  /** `http://host:port` as bound (IPv6 hosts bracketed). */
  url: string;
  /** Idempotent: stops accepting, lets in-flight requests finish, runs `release`, destroys the database. */
  close(): Promise<void>;
}

/** Listens; a failed listen destroys the database and rethrows (http-server.js says why). */
export function listenOwningDatabase(
  server: Server,
  db: { destroy(): Promise<void> },
  listenOn: { host: string; port: number },
  release?: () => void | Promise<void>,
): Promise<ServedApp>;
