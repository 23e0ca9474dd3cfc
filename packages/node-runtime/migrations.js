/**
 * A knex migration source over migrations kept in code (not a directory scan), so they run the
 * same under tsx, in tests and in a built image or bundle; applied in the order of their names.
 *
 * @param {Record<string, import('knex').Knex.Migration>} all
 * @returns {import('knex').Knex.MigrationSource<string>}
 */
export function inCodeMigrations(all) {
  return {
    getMigrations() {
      return Promise.resolve(Object.keys(all).sort());
    },
    getMigrationName(name) {
      return name;
    },
    getMigration(name) {
      return Promise.resolve(/** @type {import('knex').Knex.Migration} */ (all[name]));
    },
  };
}

/**
 * knex's `migrate.latest`, for processes that start at once on one PostgreSQL database (replicas).
 * knex creates its lock table and that table's one row unguarded: two processes that both find it
 * empty both insert a row, and from then on knex's lock (`UPDATE … WHERE is_locked = 0`, one row
 * expected) fails every start with "Migration table is already locked". Here whole runs take turns
 * under an advisory lock, which PostgreSQL releases when the holder's transaction or connection ends
 * (a crashed process included); inside it no other run is going, so a lock table other than one free
 * row is what a past race or crash left, and is put right.
 *
 * @param {import('knex').Knex} db
 * @param {import('knex').Knex.MigratorConfig} config
 */
export async function migrateToLatest(db, config) {
  if (db.client.config.client !== 'pg') {
    await db.migrate.latest(config);
    return;
  }
  const tableName = config.tableName ?? 'knex_migrations';
  // held by this transaction's connection while the migrations run on others of the pool
  await db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`knex-migrations\n${tableName}`]);
    await freeLockTable(db, `${tableName}_lock`);
    await db.migrate.latest(config);
  });
}

/**
 * @param {import('knex').Knex} db
 * @param {string} lockTable
 */
async function freeLockTable(db, lockTable) {
  if (!(await db.schema.hasTable(lockTable))) return;
  const rows = await db(lockTable).select('is_locked');
  if (rows.length === 1 && Number(rows[0].is_locked) === 0) return;
  await db.transaction(async (trx) => {
    await trx(lockTable).del();
    await trx(lockTable).insert({ is_locked: 0 });
  });
}
