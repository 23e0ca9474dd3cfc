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
