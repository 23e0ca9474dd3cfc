/**
 * Settings for every SQLite file of this repository (the backend's store, the local gateway's
 * entities), written once:
 * - one connection: SQLite serialises writers anyway, and one connection makes every transaction's
 *   check-and-set exclusive without SQLITE_BUSY retries;
 * - WAL: readers never block the writer; synchronous=NORMAL in WAL mode keeps every committed
 *   transaction across a crash of the process (kill -9); FULL would add durability across power
 *   loss at the cost of an fsync per commit;
 * - foreign keys enforced (SQLite leaves them off by default).
 *
 * @param {string} filename
 * @returns {import('knex').Knex.Config}
 */
export function sqliteConfig(filename) {
  return {
    client: 'sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate(connection, done) {
        connection.exec(
          'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;',
          (error) => done(error, connection),
        );
      },
    },
  };
}
