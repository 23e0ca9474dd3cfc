import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { freePort } from '../../../packages/node-runtime/free-port.js';
import { answers, startServerProcess, type ServerProcess } from './server-process.ts';

export class RedisNotFoundError extends Error {}

export interface RedisServerOptions {
  /** Its working directory (created when missing). */
  dir: string;
  host?: string;
  /** 0: a free loopback port. */
  port?: number;
  /** Counters and bans all expire; past this much memory Redis drops the keys closest to expiry. */
  maxMemory?: string;
  onLine?: (line: string) => void;
}

export interface RunningRedis extends ServerProcess {
  host: string;
  port: number;
  version: string;
}

/** Debian's redis-server, or one line saying what to install. */
function redisServerVersion(): string {
  try {
    const output = execFileSync('redis-server', ['--version'], { encoding: 'utf8' });
    return /v=(\S+)/.exec(output)?.[1] ?? output.trim();
  } catch {
    throw new RedisNotFoundError('the cluster needs redis-server, which is missing: apt-get install redis-server');
  }
}

/**
 * A redis-server of our own on loopback, in the foreground, in `dir`: no persistence (counters
 * and bans are worth nothing after a restart, as Kong's), no system service.
 */
export async function startRedisServer(options: RedisServerOptions): Promise<RunningRedis> {
  const version = redisServerVersion();
  const host = options.host ?? '127.0.0.1';
  mkdirSync(options.dir, { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const port = options.port || (await freePort(host));
    try {
      const server = await startServerProcess({
        name: `redis-server on ${host}:${port}`,
        command: 'redis-server',
        args: [
          '--bind', host,
          '--port', String(port),
          '--dir', options.dir,
          '--save', '',
          '--appendonly', 'no',
          '--daemonize', 'no',
          '--maxmemory', options.maxMemory ?? '128mb',
          '--maxmemory-policy', 'volatile-ttl',
        ],
        cwd: options.dir,
        ready: async (logs) => logs.some((line) => /ready to accept connections/i.test(line)) && (await answers(host, port)),
        onLine: options.onLine,
      });
      return Object.assign(server, { host, port, version });
    } catch (error) {
      // an ephemeral port taken between the probe and the bind: another one
      if (options.port || attempt >= 5 || !/Address already in use/.test((error as Error).message)) throw error;
    }
  }
}
