/**
 * Failures of the database itself rather than of the request: it is unreachable, restarting, out
 * of connections or not answering in time. The API answers them 503 service_unavailable (a client
 * may retry), not 500 (a bug), so that clients and alerts tell an outage from a defect.
 */

// Node's socket errors, PostgreSQL's connection-exception class (08), operator intervention
// (57P01-57P03: shutdown, crash, starting up) and too_many_connections, SQLite's lock and I/O codes.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
]);

// node-postgres' own failures carry no code: a connection lost, or its query_timeout
const UNAVAILABLE_MESSAGES = /^(Connection terminated|Connection ended unexpectedly|Query read timeout|timeout exceeded when trying to connect)/;

export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'KnexTimeoutError') return true; // no connection free in time
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  if (syscall === 'connect') return true; // whatever the code: ENOENT for a Unix socket's server gone
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return UNAVAILABLE_MESSAGES.test(error.message);
}
