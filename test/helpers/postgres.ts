import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface TestPostgres {
  /** A new, empty database on this server; its `postgres://` URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server, its files kept: an outage. */
  stop(): Promise<void>;
  /** Starts it again after stop(). */
  start(): Promise<void>;
  /** Stops the server and removes its files. */
  dispose(): Promise<void>;
}

/** Debian's postgresql package puts the server programs in /usr/lib/postgresql/<major>/bin. */
function serverBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a)) : [];
  const dir = majors.map((major) => join(root, major, 'bin')).find((bin) => existsSync(join(bin, 'initdb')));
  if (!dir) {
    throw new Error('PostgreSQL server programs not found under /usr/lib/postgresql: apt-get install postgresql (.ci/run installs it)');
  }
  return dir;
}

/** Part of the template's name: a change to initdb's arguments below makes a new one. */
const TEMPLATE_FORMAT = 1;

/**
 * A data directory as initdb makes it, made once for this PostgreSQL and owner and kept in the
 * temporary directory: each test file copies it (~0.1 CPU-s) instead of running initdb (~0.9 CPU-s,
 * ~1-5 s). Made aside and renamed into place, so a worker racing another one either finds it
 * whole or makes its own and keeps the first that landed.
 */
async function templateDataDir(bin: string, owner: string, pgCommand: PgCommand, chownToOwner: (path: string) => void): Promise<string> {
  const template = join(tmpdir(), `animal-store-pg-template-${TEMPLATE_FORMAT}-${basename(dirname(bin))}-${owner}`);
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  const staging = mkdtempSync(`${template}.`);
  try {
    chownToOwner(staging);
    await pgCommand('initdb', ['-D', join(staging, 'data'), '-U', owner, '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], staging);
    try {
      renameSync(join(staging, 'data'), template);
    } catch (error) {
      // another worker's landed first (ENOTEMPTY/EEXIST): the same directory
      if (!existsSync(join(template, 'PG_VERSION'))) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return template;
}

type PgCommand = (program: string, args: string[], cwd: string) => Promise<unknown>;

export interface TestPostgresOptions {
  /** Roles that sign in with their password (scram-sha-256), as on a real server; every other is trusted. */
  passwordRoles?: string[];
}

/**
 * A throwaway PostgreSQL server for one test file: its own cluster in a temporary directory,
 * reachable only through a Unix socket there (no TCP port to collide on). PostgreSQL refuses to
 * run as root, so under root (CI) it runs as the package's `postgres` user.
 */
export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const bin = serverBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-pg-'));
  const asRoot = userInfo().uid === 0;
  const owner = asRoot ? 'postgres' : userInfo().username;
  let chownToOwner = (_path: string) => {};
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownToOwner = (path) => chownSync(path, Number(stdout), Number(gid));
  }
  chownToOwner(dir);
  const pgCommand: PgCommand = (program, args, cwd) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { cwd }) : run(join(bin, program), args, { cwd });

  const data = join(dir, 'data');
  // -a keeps the owner (postgres) and initdb's 0700
  await run('cp', ['-a', await templateDataDir(bin, owner, pgCommand, chownToOwner), data]);
  if (options.passwordRoles?.length) {
    // pg_hba.conf: the first line that matches decides, so these go before initdb's `trust` ones
    const hba = join(data, 'pg_hba.conf');
    const lines = options.passwordRoles.map((role) => `local all ${role} scram-sha-256\n`).join('');
    writeFileSync(hba, `${lines}${readFileSync(hba, 'utf8')}`);
  }
  // fsync off: a test cluster trades durability for speed; the backend's own behaviour is unchanged.
  const start = () => pgCommand('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-k ${dir} -c listen_addresses= -c fsync=off`, 'start'], dir);
  await start();
  const urlOf = (database: string) => `postgres://${owner}@${encodeURIComponent(dir)}/${database}`;

  return {
    async createDatabase(name) {
      const admin = new pg.Client({ connectionString: urlOf('postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await admin.end();
      }
      return urlOf(name);
    },
    async stop() {
      await pgCommand('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], dir);
    },
    async start() {
      await start();
    },
    async dispose() {
      await pgCommand('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], dir).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
