/**
 * How a bundle holds its npm packages (./module-bundles.js: the tests' modules and the entries run as processes; and
 * the local gateway's ./build-gateway.ts): node then reads one file where it resolved and compiled
 * hundreds. Left external, imported as they are: the database drivers knex requires by name when a
 * connection of that client is made (sqlite3 and pg, native addons or optional ones; the others
 * are not installed: esbuild fails on any new one knex names), esbuild (its binary; `npm start`
 * builds the gateway), and zod and iconv-lite, large and mostly never run (koa-body's schemas, the
 * encoding tables), which a bundle would hold in memory for nothing. The repository's own code
 * finds package files (swagger-ui-dist's, uPlot's) by createRequire from its sources'
 * import.meta.url, which each module keeps.
 */
export const PACKAGES_BUNDLED = {
  external: [
    ...['sqlite3', 'pg', 'better-sqlite3', 'mysql', 'mysql2', 'mariadb', 'oracledb', 'tedious'],
    ...['esbuild', 'zod', 'iconv-lite'],
  ],
  // for the require() of node's modules and of the packages left external by bundled CommonJS packages
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
};
