// deploy/postgres/portal-database.sh (compose's portal-database one-shot) against a real
// PostgreSQL: it makes the portal's role and database, twice without harm, and the portal's store
// migrates in that database as that role; other roles cannot connect to it. The portal's role
// signs in with its password (scram-sha-256), as on compose's postgres image.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import knex from 'knex';
import pg from 'pg';
import { parse } from 'yaml';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { REPO_ROOT, runToEnd, spawnTs } from '../helpers/process.ts';
import { startPortal } from '../../portal/src/index.ts';

const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { environment?: Record<string, string> }>;
};
/** A service's environment as compose interpolates it (`${NAME:-default}`) from `vars`. */
const composeEnvironment = (service: string, vars: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(compose.services[service]!.environment ?? {}).map(([name, value]) => [
      name,
      value.replace(/\$\{([A-Z_]+)(?::-([^}]*))?\}/g, (_, variable: string, fallback = '') => vars[variable] || fallback),
    ]),
  );

let postgres: TestPostgres;
let superuserUrl: URL;

test.before(async () => {
  postgres = await startTestPostgres({ passwordRoles: ['portal'] });
  superuserUrl = new URL(await postgres.createDatabase('kong'));
});
test.after.always(async () => {
  await postgres?.dispose();
});

const urlAs = (user: string, database: string, password = '') => {
  const url = new URL(superuserUrl);
  url.username = user;
  url.password = password;
  url.pathname = `/${database}`;
  return url.href;
};

// serial: both set the one role's password
test.serial('the one-shot makes the portal\'s role and database, idempotently, and the portal migrates there as that role', async (t) => {
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
    databaseUrl: urlAs('portal', 'portal', "it's a secret"),
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

test.serial("any password works: compose's one-shot sets it as is and the portal signs in with compose's environment", async (t) => {
  // `openssl rand -base64` passwords hold `/`; none of these characters may need encoding anywhere
  const password = "p/ss#1%?@ it's+=";
  const oneShot = composeEnvironment('portal-database', { PORTAL_PG_PASSWORD: password });
  t.is(oneShot.PORTAL_PG_PASSWORD, password);
  const result = await runToEnd('sh', ['deploy/postgres/portal-database.sh'], {
    ...oneShot,
    PATH: process.env.PATH,
    PGHOST: decodeURIComponent(superuserUrl.hostname),
    PGUSER: superuserUrl.username,
    PGPASSWORD: '',
  });
  t.is(result.code, 0, result.stderr);

  const wrong = new pg.Client({ connectionString: urlAs('portal', 'portal', 'portal') });
  await t.throwsAsync(wrong.connect(), { message: /password authentication failed for user "portal"/ }, 'the role signs in with its password only');

  // compose's portal environment, its host the test server's socket directory
  const env = composeEnvironment('portal', { PORTAL_PG_PASSWORD: password });
  t.true(env.PORTAL_DATABASE_URL!.includes('@postgres:5432/'));
  const portal = spawnTs('portal/src/main.ts', [], {
    ...env,
    PORTAL_DATABASE_URL: env.PORTAL_DATABASE_URL!.replace('@postgres:5432/', `@${superuserUrl.host}/`),
    PORTAL_HOST: '127.0.0.1',
    PORTAL_PORT: '0',
    KONG_ADMIN_URL: 'http://127.0.0.1:9',
    PORTAL_PROMETHEUS_URL: 'http://127.0.0.1:9',
  });
  t.teardown(async () => {
    portal.child.kill('SIGTERM');
    await portal.exited;
  });
  const [, url] = await portal.waitFor(/listening on (http:\/\/\S+)/, 60_000);
  t.is((await fetch(`${url}/portal/signin`)).status, 200);
});
