import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../packages/node-runtime/free-port.js';

/** A RESP2 reply: simple strings and bulk strings as strings, integers as numbers, arrays. */
export type RespValue = string | number | null | RespError | RespValue[];

class RespError extends Error {}

interface RedisTls {
  /** PEM files redis-server serves (cert, key) and a client may trust (ca). */
  cert: string;
  key: string;
  ca: string;
}

export interface RedisOptions {
  password?: string;
  /** Also listen with TLS on a second loopback port. */
  tls?: RedisTls;
}

/**
 * A redis-server of the test's own: a temp directory, an ephemeral loopback port, no persistence
 * (`--save '' --appendonly no`). kill() and restart() for fault tests: the restarted server
 * listens on the same port(s), empty.
 */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** The TLS port when started with `tls`. */
  readonly tlsPort: number | undefined;
  /** One command on a fresh connection (AUTH first when the server has a password). */
  command(...args: (string | number)[]): Promise<RespValue>;
  /** Commands on one connection, in order (SELECT then KEYS, say). */
  commands(...commands: (string | number)[][]): Promise<RespValue[]>;
  /** SIGKILL: the port refuses connections until restart(). */
  kill(): Promise<void>;
  /** SIGSTOP: a hung server. The kernel still accepts connections; nothing answers until resume(). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function encode(args: (string | number)[]): string {
  let out = `*${args.length}\r\n`;
  for (const arg of args) {
    const text = String(arg);
    out += `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
  }
  return out;
}

/** Parses one reply at `offset`; undefined when the buffer does not hold all of it yet. */
function parse(buffer: Buffer, offset: number): { value: RespValue; next: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const kind = String.fromCharCode(buffer[offset]!);
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const after = lineEnd + 2;
  switch (kind) {
    case '+':
      return { value: line, next: after };
    case '-':
      return { value: new RespError(line), next: after };
    case ':':
      return { value: Number(line), next: after };
    case '$': {
      const size = Number(line);
      if (size < 0) return { value: null, next: after };
      if (buffer.length < after + size + 2) return undefined;
      return { value: buffer.toString('utf8', after, after + size), next: after + size + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, next: after };
      const values: RespValue[] = [];
      let next = after;
      for (let i = 0; i < count; i++) {
        const item = parse(buffer, next);
        if (!item) return undefined;
        values.push(item.value);
        next = item.next;
      }
      return { value: values, next };
    }
    default:
      throw new Error(`bad RESP reply: ${buffer.toString('utf8', offset)}`);
  }
}

/** Commands on one new connection to the Redis at 127.0.0.1:`port`, in order; their replies. */
export function redisCommands(port: number, commands: (string | number)[][]): Promise<RespValue[]> {
  return exchange(port, commands);
}

function exchange(port: number, commands: (string | number)[][]): Promise<RespValue[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    const replies: RespValue[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error('redis: no reply within 5 s')));
    socket.on('error', reject);
    socket.on('connect', () => socket.write(commands.map(encode).join('')));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      let offset = 0;
      for (;;) {
        const reply = parse(buffer, offset);
        if (!reply) break;
        replies.push(reply.value);
        offset = reply.next;
      }
      buffer = buffer.subarray(offset);
      if (replies.length === commands.length) {
        socket.end();
        resolve(replies);
      }
    });
  });
}

export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'redis-test-'));
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let port = 0;
  let tlsPort: number | undefined;

  const args = (): string[] => {
    const list = ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no'];
    if (options.password) list.push('--requirepass', options.password);
    if (options.tls && tlsPort) {
      list.push(
        '--tls-port', String(tlsPort),
        '--tls-cert-file', options.tls.cert,
        '--tls-key-file', options.tls.key,
        '--tls-ca-cert-file', options.tls.ca,
        '--tls-auth-clients', 'no',
      );
    }
    return list;
  };

  const launch = async (): Promise<void> => {
    const proc = spawn('redis-server', args(), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    proc.stdout.on('data', (chunk) => (output += chunk));
    proc.stderr.on('data', (chunk) => (output += chunk));
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + 5_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited: ${output}`);
      if (/Ready to accept connections|ready to accept connections/.test(output)) return;
      if (Date.now() > deadline) throw new Error(`redis-server did not start within 5 s: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  // A free port can be taken between the probe and redis-server's bind: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    if (options.tls) tlsPort = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      if (attempt >= 4) throw error;
    }
  }

  const prefix = options.password ? [['AUTH', options.password]] : [];
  const commands = async (...list: (string | number)[][]): Promise<RespValue[]> => {
    const replies = await exchange(port, [...prefix, ...list]);
    return replies.slice(prefix.length);
  };

  const kill = async (): Promise<void> => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };

  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    get tlsPort() {
      return tlsPort;
    },
    commands,
    async command(...args) {
      const [reply] = await commands(args);
      return reply!;
    },
    kill,
    pause() {
      if (child && child.exitCode === null) child.kill('SIGSTOP');
    },
    resume() {
      if (child && child.exitCode === null) child.kill('SIGCONT');
    },
    async restart() {
      await kill();
      await launch();
    },
    async stop() {
      if (child && child.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
