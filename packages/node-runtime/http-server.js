/**
 * Serves an app that owns a database (the backend's store, the portal's) on host:port (0: any free
 * port), written once:
 * - a failed listen (a busy port) destroys the database before rethrowing, so the caller can report
 *   and exit without a pool holding the process open;
 * - the URL comes from server.address(): the port actually bound, IPv6 hosts bracketed;
 * - close() is idempotent: it stops accepting, lets in-flight requests finish (idle keep-alive
 *   sockets are closed at once), runs the app's `release` (its timers), then destroys the database.
 *
 * @param {import('node:http').Server} server
 * @param {{ destroy(): Promise<void> }} db
 * @param {{ host: string, port: number }} listenOn
 * @param {() => void | Promise<void>} [release]
 * @returns {Promise<{ url: string, close(): Promise<void> }>}
 */
export async function listenOwningDatabase(server, db, { host, port }, release) {
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(undefined));
    });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const bound = /** @type {import('node:net').AddressInfo} */ (server.address());
  const boundHost = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  /** @type {Promise<void> | undefined} */
  let closing;
  return {
    url: `http://${boundHost}:${bound.port}`,
    close() {
      closing ??= (async () => {
        await new Promise((resolve) => {
          server.close(() => resolve(undefined));
          server.closeIdleConnections();
        });
        await release?.();
        await db.destroy();
      })();
      return closing;
    },
  };
}
