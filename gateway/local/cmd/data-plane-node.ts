import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../../packages/node-runtime/free-port.js';
import { formatListener, hostPort, parseListeners } from './listeners.ts';
import { findNginx, type NginxBinary } from './nginx-binary.ts';
import { preparePrefix, prefixPaths, withDefaults, writeFileAtomically, type NodeSettings } from './nginx-prefix.ts';

export interface DataPlaneNodeOptions extends Partial<NodeSettings> {
  /** The node's directory (created when missing); a new temporary one by default. */
  prefix?: string;
  /** A snapshot to start from (written to <prefix>/snapshot.json before nginx starts): JSON text or a value. */
  snapshot?: unknown;
  /** Each line nginx writes to stderr (its error log). */
  log?: (line: string) => void;
  /** How long to wait for the proxy port to answer. */
  startTimeoutMs?: number;
  nginx?: NginxBinary;
}

export interface DataPlaneNode {
  /** The first plain proxy listener's URL (the first ssl one's when all are ssl). */
  proxyUrl: string;
  /** The first ssl proxy listener's URL (https://), when there is one. */
  proxySslUrl: string | undefined;
  /** The status API (Kong's status_listen), when one was asked for. */
  statusUrl: string | undefined;
  /** The same status API on the node's unix socket, always there (the Admin API reads it). */
  statusSocket: string;
  prefix: string;
  /** The nginx master's pid. */
  pid: number;
  /** The last lines of nginx's error log (bounded). */
  logs: string[];
  /** Settles when the nginx master exits, whoever stopped it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  settings: NodeSettings;
  /** Stops nginx (SIGQUIT, graceful, then SIGTERM after `graceMs`; SIGTERM at once by default) and waits. */
  stop(options?: { graceful?: boolean; graceMs?: number }): Promise<void>;
  /** `nginx -s reload`: re-reads nginx.conf and kong_conf.json; new workers start from snapshot.json. */
  reload(): Promise<void>;
}

const MAX_LOG_LINES = 2000;

export class DataPlaneStartError extends Error {
  /** The address nginx could not bind because another process holds it (`127.0.0.1:8000`), if that is why. */
  readonly addressInUse: string | undefined;

  constructor(message: string, nginxOutput: readonly string[] = []) {
    super(message);
    this.addressInUse = nginxOutput.map((line) => BIND_FAILED.exec(line)?.[1]).find((address) => address !== undefined);
  }
}

function splitListen(listen: string): { host: string; port: number } {
  const i = listen.lastIndexOf(':');
  return { host: listen.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(listen.slice(i + 1)) };
}

function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '*') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

function answers(host: string, port: number): Promise<boolean> {
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
 * The processes nginx's master has forked: its workers. Read from /proc rather than from nginx's
 * "start worker process" line, which it logs at notice level only (KONG_LOG_LEVEL=warn hides it).
 */
function workerPids(masterPid: number): Set<number> {
  const workers = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ")"
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === masterPid) workers.add(Number(entry));
  }
  return workers;
}

function urlOf(host: string, port: number, scheme = 'http'): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

// nginx runs in the foreground as a child: if this process ends without stopping a node (a test
// runner's timeout, a crash), the node ends with it instead of holding its port.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

interface Spawned {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnNginx(nginx: NginxBinary, prefix: string, onLine: (line: string) => void): Spawned {
  const child = spawn(nginx.path, ['-p', `${prefix}/`, '-c', prefixPaths(prefix).nginxConf, '-g', 'daemon off;'], {
    cwd: prefix,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let pending = '';
  const onData = (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let newline = pending.indexOf('\n');
    while (newline !== -1) {
      onLine(pending.slice(0, newline));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  running.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (pending) onLine(pending);
      resolve({ code, signal });
    });
    child.once('error', (error) => {
      onLine(`spawn ${nginx.path}: ${error.message}`);
      resolve({ code: -1, signal: null });
    });
  });
  return { child, exited };
}

/** The reason nginx gave for not starting: Kong.init's error, else its first emerg/alert/crit line. */
function startFailure(lines: string[]): string | undefined {
  const init = lines.find((line) => line.includes('init_by_lua error: '));
  if (init) return init.slice(init.indexOf('init_by_lua error: ') + 'init_by_lua error: '.length).replace(/^\S+\.lua:\d+: /, '');
  const fatal = lines.find((line) => /\[(emerg|alert|crit)\]/.test(line));
  return fatal?.replace(/^.*?\[(emerg|alert|crit)\] \d+#\d+: /, '') ?? lines.at(-1);
}

/** nginx's line when a listen address is taken; the address is the first group. */
const BIND_FAILED = /bind\(\) to (\S+) failed \(98: Address already in use\)/;

/**
 * Starts one data-plane node, as `kong start` does for a data plane: prepares the prefix, runs
 * nginx in the foreground as the invoking user and resolves once the proxy port answers. Port 0
 * picks a free loopback port (again, if nginx loses it to another process before binding).
 */
export async function startDataPlaneNode(options: DataPlaneNodeOptions = {}): Promise<DataPlaneNode> {
  const { prefix: givenPrefix, snapshot, log, startTimeoutMs = 15_000, nginx: givenNginx, ...rest } = options;
  const settings = withDefaults(rest);
  const nginx = givenNginx ?? findNginx();
  // absolute, as Kong's conf_loader makes it: nginx runs in it and reads -c relative to that
  const prefix = resolve(givenPrefix ?? mkdtempSync(join(tmpdir(), 'data-plane-')));
  mkdirSync(prefix, { recursive: true });
  // owner-only: certificates' private keys and key-auth keys (kong/clustering/init.lua's write_file)
  if (snapshot !== undefined) writeFileAtomically(prefixPaths(prefix).snapshot, typeof snapshot === 'string' ? snapshot : JSON.stringify(snapshot), 0o600);

  const logs: string[] = [];
  const onLine = (line: string) => {
    logs.push(line);
    if (logs.length > MAX_LOG_LINES) logs.splice(0, logs.length - MAX_LOG_LINES);
    log?.(line);
  };

  try {
    return await startIn(prefix, settings, nginx, logs, onLine, startTimeoutMs);
  } catch (error) {
    // a prefix made for this node goes with it
    if (givenPrefix === undefined) rmSync(prefix, { recursive: true, force: true });
    throw error;
  }
}

/**
 * kong/cmd/start.lua: "Kong is already running in <prefix>" when the prefix's nginx.pid names a
 * live process. A node left running by a gateway that was killed would otherwise share the proxy
 * port (reuseport) with the new one and answer with its old configuration.
 */
function refuseWhenRunning(prefix: string): void {
  let pid: number;
  try {
    pid = Number(readFileSync(prefixPaths(prefix).pid, 'utf8').trim());
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  let command: string;
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (command.startsWith('nginx: master process') && command.includes(prefix)) {
    throw new Error(`a data-plane node is already running in ${prefix} (nginx pid ${pid}): stop it first (kill -QUIT ${pid})`);
  }
}

async function startIn(
  prefix: string,
  settings: NodeSettings,
  nginx: NginxBinary,
  logs: string[],
  onLine: (line: string) => void,
  startTimeoutMs: number,
): Promise<DataPlaneNode> {
  refuseWhenRunning(prefix);
  const listeners = parseListeners('KONG_PROXY_LISTEN', settings.proxyListen);
  const proxy = listeners[0];
  if (!proxy) throw new DataPlaneStartError('KONG_PROXY_LISTEN: off is not supported: a data-plane node is a proxy');
  const status = settings.statusListen ? splitListen(settings.statusListen) : undefined;
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    for (const listener of listeners) ports.push(listener.port === 0 ? await freePort(listener.host) : listener.port);
    const proxyListen = listeners.map((listener, i) => formatListener(listener, ports[i])).join(', ');
    const port = ports[0]!;
    const listen = hostPort(proxy.host, port);
    const statusPort = status && (status.port === 0 ? await freePort(status.host) : status.port);
    const statusListen = status ? hostPort(status.host, statusPort!) : null;
    await preparePrefix(prefix, settings, nginx, proxyListen, statusListen);
    const firstLine = logs.length;
    const spawned = spawnNginx(nginx, prefix, onLine);
    let exitedEarly: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    void spawned.exited.then((result) => (exitedEarly = result));
    const deadline = Date.now() + startTimeoutMs;
    const host = connectHost(proxy.host);
    // nginx binds every listener before it starts workers, and retries a busy one for 2.5 s: the
    // node is up when the proxy answers and the workers have started.
    const started = () => spawned.child.pid !== undefined && workerPids(spawned.child.pid).size > 0;
    while (!exitedEarly && !(started() && (await answers(host, port)))) {
      if (Date.now() > deadline) {
        spawned.child.kill('SIGKILL');
        await spawned.exited;
        throw new DataPlaneStartError(`nginx did not answer on ${listen} within ${startTimeoutMs} ms:\n${logs.slice(firstLine).join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (exitedEarly) {
      const output = logs.slice(firstLine);
      // a port picked here and taken meanwhile: pick again; a port that was asked for stays taken
      const picked = listeners.flatMap((listener, i) => (listener.port === 0 ? [ports[i]!] : []));
      if (status?.port === 0) picked.push(statusPort!);
      const busy = output.map((line) => BIND_FAILED.exec(line)?.[1]).find((address) => address !== undefined);
      const busyPort = busy === undefined ? undefined : Number(busy.slice(busy.lastIndexOf(':') + 1));
      if (attempt < 5 && busyPort !== undefined && picked.includes(busyPort)) continue;
      throw new DataPlaneStartError(`the data-plane node did not start: ${startFailure(output) ?? `exit code ${exitedEarly.code}`}`, output);
    }
    const urls = listeners.map((listener, i) => ({ ssl: listener.ssl, url: urlOf(connectHost(listener.host), ports[i]!, listener.ssl ? 'https' : 'http') }));
    const proxyUrl = (urls.find((url) => !url.ssl) ?? urls[0]!).url;
    const proxySslUrl = urls.find((url) => url.ssl)?.url;
    return makeNode(spawned, { ...settings, proxyListen, statusListen }, prefix, { proxyUrl, proxySslUrl }, logs);
  }
}

function makeNode(
  spawned: Spawned,
  settings: NodeSettings,
  prefix: string,
  urls: { proxyUrl: string; proxySslUrl: string | undefined },
  logs: string[],
): DataPlaneNode {
  const status = settings.statusListen ? splitListen(settings.statusListen) : undefined;
  let stopped: Promise<void> | undefined;
  return {
    ...urls,
    statusUrl: status ? urlOf(connectHost(status.host), status.port) : undefined,
    statusSocket: prefixPaths(prefix).statusSocket,
    prefix,
    pid: spawned.child.pid!,
    logs,
    exited: spawned.exited,
    settings,
    stop({ graceful = false, graceMs = 5000 } = {}) {
      stopped ??= (async () => {
        if (spawned.child.exitCode !== null || spawned.child.signalCode !== null) return;
        spawned.child.kill(graceful ? 'SIGQUIT' : 'SIGTERM');
        const timer = setTimeout(() => spawned.child.kill(graceful ? 'SIGTERM' : 'SIGKILL'), graceful ? graceMs : 5000);
        await spawned.exited;
        clearTimeout(timer);
      })();
      return stopped;
    },
    async reload() {
      const before = logs.length;
      const oldWorkers = workerPids(spawned.child.pid!);
      spawned.child.kill('SIGHUP');
      const deadline = Date.now() + 10_000;
      // nginx forks new workers once the new configuration is in place.
      while (![...workerPids(spawned.child.pid!)].some((pid) => !oldWorkers.has(pid))) {
        const failed = logs.slice(before).find((line) => /\[emerg\]/.test(line));
        if (failed) throw new Error(`reload failed: ${failed}`);
        if (Date.now() > deadline) throw new Error('reload: no new worker within 10 s');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}
