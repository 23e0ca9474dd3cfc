import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface TestPostgres {
  /** A new, empty database on this server; its `postgres://` URL. */
  createDatabase(name: string): Promise<string>;
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

/**
 * A throwaway PostgreSQL server for one test file: its own cluster in a temporary directory,
 * reachable only through a Unix socket there (no TCP port to collide on). PostgreSQL refuses to
 * run as root, so under root (CI) it runs as the package's `postgres` user.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = serverBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-pg-'));
  const asRoot = userInfo().uid === 0;
  const owner = asRoot ? 'postgres' : userInfo().username;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout), Number(gid));
  }
  const pgCommand = (program: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { cwd: dir }) : run(join(bin, program), args, { cwd: dir });

  const data = join(dir, 'data');
  await pgCommand('initdb', ['-D', data, '-U', owner, '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  // fsync off: a test cluster trades durability for speed; the backend's own behaviour is unchanged.
  await pgCommand('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-k ${dir} -c listen_addresses= -c fsync=off`, 'start']);
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
    async dispose() {
      await pgCommand('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
