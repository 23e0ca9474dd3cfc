// deploy/postgres/portal-database.sh (compose's portal-database one-shot) against a real
// PostgreSQL: it makes the portal's role and database, twice without harm, and the portal's store
// migrates in that database as that role; other roles cannot connect to it.
import test from 'ava';
import knex from 'knex';
import pg from 'pg';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { runToEnd } from '../helpers/process.ts';
import { startPortal } from '../../portal/src/index.ts';

let postgres: TestPostgres;
let superuserUrl: URL;

test.before(async () => {
  postgres = await startTestPostgres();
  superuserUrl = new URL(await postgres.createDatabase('kong'));
});
test.after.always(async () => {
  await postgres?.dispose();
});

const urlAs = (user: string, database: string) => {
  const url = new URL(superuserUrl);
  url.username = user;
  url.pathname = `/${database}`;
  return url.href;
};

test('the one-shot makes the portal\'s role and database, idempotently, and the portal migrates there as that role', async (t) => {
  const env = {
    PATH: process.env.PATH,
    PGHOST: decodeURIComponent(superuserUrl.hostname),
    PGUSER: superuserUrl.username,
    PGDATABASE: 'kong',
    PORTAL_PG_PASSWORD: "it's a secret",
  };
  for (let run = 0; run < 2; run++) {
    const result = await runToEnd('sh', ['deploy/postgres/portal-database.sh'], env);
    t.is(result.code, 0, result.stderr);
  }
  const without = await runToEnd('sh', ['deploy/postgres/portal-database.sh'], { ...env, PORTAL_PG_PASSWORD: '' });
  t.not(without.code, 0);
  t.regex(without.stderr, /PORTAL_PG_PASSWORD must be set/);

  const admin = knex({ client: 'pg', connection: superuserUrl.href });
  try {
    const owner = await admin.raw(`SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'portal'`);
    t.is(owner.rows[0].owner, 'portal');
    const role = await admin.raw(`SELECT rolsuper, rolcreaterole, rolcreatedb, rolpassword IS NOT NULL AS has_password FROM pg_authid WHERE rolname = 'portal'`);
    t.deepEqual(role.rows[0], { rolsuper: false, rolcreaterole: false, rolcreatedb: false, has_password: true });
    await admin.raw('CREATE ROLE other LOGIN');
  } finally {
    await admin.destroy();
  }

  const portal = await startPortal({
    host: '127.0.0.1',
    port: 0,
    dataDir: '/nonexistent-portal-data',
    databaseUrl: urlAs('portal', 'portal'),
    signUp: 'invite',
    publicUrl: 'http://portal.test',
    apiUrl: 'http://portal.test/v1',
    adminUrl: 'http://127.0.0.1:9',
    statusUrls: [],
  });
  try {
    t.is((await fetch(`${portal.url}/portal/signin`)).status, 200);
  } finally {
    await portal.close();
  }
  const other = new pg.Client({ connectionString: urlAs('other', 'portal') });
  await t.throwsAsync(other.connect(), { message: /permission denied for database "?portal"?/ });
});
