import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

/**
 * A server this process runs in the foreground as a child (redis-server, the balancer's nginx):
 * started, waited for, stopped, and never left behind when this process exits.
 */
export interface ServerProcess {
  pid: number;
  /** The last lines it wrote to stdout and stderr (bounded). */
  logs: string[];
  /** Settles when it exits, whoever stopped it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL, at once. */
  kill(): Promise<void>;
}

export class ServerStartError extends Error {}

const MAX_LOG_LINES = 500;

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

/** Whether something accepts TCP connections at host:port. */
export function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts `command` and resolves once `ready()` holds (polled every 10 ms), or throws
 * ServerStartError with `name`, why it stopped or timed out, and its last output.
 */
export async function startServerProcess(options: {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  ready: (logs: string[]) => boolean | Promise<boolean>;
  timeoutMs?: number;
  onLine?: (line: string) => void;
}): Promise<ServerProcess> {
  const { name, command, args, cwd, ready, timeoutMs = 10_000, onLine } = options;
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  let pending = '';
  const onData = (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      logs.push(line);
      if (logs.length > MAX_LOG_LINES) logs.splice(0, logs.length - MAX_LOG_LINES);
      onLine?.(line);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  running.add(child);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve((exit = { code, signal }));
    });
    child.once('error', (error) => {
      running.delete(child);
      logs.push(`${command}: ${error.message}`);
      resolve((exit = { code: -1, signal: null }));
    });
  });

  const last = () => logs.slice(-5).join(' | ');
  const deadline = Date.now() + timeoutMs;
  while (!exit && !(await ready(logs))) {
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      throw new ServerStartError(`${name} did not start within ${timeoutMs} ms: ${last()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (exit) throw new ServerStartError(`${name} did not start (${exit.signal ?? `exit code ${exit.code}`}): ${last()}`);

  const signalAndWait = async (signal: NodeJS.Signals, graceMs: number) => {
    if (exit) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return {
    pid: child.pid!,
    logs,
    exited,
    stop: (graceMs = 5000) => signalAndWait('SIGTERM', graceMs),
    kill: () => signalAndWait('SIGKILL', 0),
  };
}
