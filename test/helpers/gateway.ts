import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type GatewayOptions, type RunningGateway } from '../../gateway/local/index.ts';
import { ManualClock } from './clock.ts';
import { PLUGINS_DIR } from './gateway-files.ts';

export interface TestGateway extends RunningGateway {
  clock: ManualClock;
  dir: string;
  /** The control plane's log lines and the data plane's error log, as `level: message`. */
  logs: string[];
  dispose(): Promise<void>;
}

/** Sets a data-plane node's test clock (kong_conf.json test_clock): PUT /clock on its unix socket. */
export function setDataPlaneClock(prefix: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath: join(prefix, 'test-clock.sock'), method: 'PUT', path: `/clock?ms=${ms}` }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 204 || res.statusCode === 200 ? resolve() : reject(new Error(`test clock: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A local gateway (control plane + one data-plane node) on ephemeral loopback ports, its own
 * directory, and a manual clock both planes follow. One nginx worker, as Kong's own specs run
 * (spec/kong_tests.conf); `node.workerProcesses` asks for more.
 */
export async function startTestGateway(
  options: Partial<GatewayOptions> & { configFile: string; clock?: ManualClock; dir?: string },
): Promise<TestGateway> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'gateway-'));
  const clock = options.clock ?? new ManualClock(Date.UTC(2030, 0, 1, 12, 0, 0));
  const logs: string[] = [];
  const { node, ...rest } = options;
  const gateway = await startGateway({
    pluginsDir: PLUGINS_DIR,
    dataFile: join(dir, 'gateway.sqlite'),
    prefix: join(dir, 'gateway'),
    adminPort: 0,
    // A write answers once the node runs it: on a loaded 2-core machine that can take over the
    // production bound of 1 s, and the test's next request must see the write.
    writeSettleMs: 15_000,
    now: clock.now,
    every: clock.every,
    log: (level, message) => logs.push(`${level}: ${message}`),
    ...rest,
    node: {
      proxyListen: '127.0.0.1:0',
      statusListen: null,
      workerProcesses: 1,
      sharedDicts: ['animal_store_edge 10m'],
      testClock: true,
      ...node,
    },
  });
  const unfollow = clock.follow((ms) => setDataPlaneClock(gateway.node.prefix, ms));
  await setDataPlaneClock(gateway.node.prefix, clock.now());
  return Object.assign<RunningGateway, Omit<TestGateway, keyof RunningGateway>>(gateway, {
    clock,
    dir,
    logs,
    async dispose() {
      unfollow();
      // A finished test has nothing in flight to drain: nginx's fast shutdown (SIGTERM) before
      // close(), whose graceful one (SIGQUIT) takes ~0.5 s per gateway.
      await gateway.node.stop();
      await gateway.close();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  });
}

/**
 * A gateway whose declarative file is empty, for tests whose entities come through the Admin API;
 * dispose() removes its directory too.
 */
export async function startEmptyGateway(): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-'));
  const gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir });
  const dispose = gateway.dispose.bind(gateway);
  gateway.dispose = async () => {
    await dispose();
    rmSync(dir, { recursive: true, force: true });
  };
  return gateway;
}

/** Writes a declarative file into `dir` and returns its path. */
export function writeConfig(dir: string, yaml: string, name = 'kong.yml'): string {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}

export interface EchoUpstream {
  url: string;
  /** What the last request looked like when it reached the upstream. */
  last(): { method: string; url: string; headers: IncomingHttpHeaders; body: string } | undefined;
  server: Server;
  close(): Promise<void>;
}

/** An upstream that records what reaches it and answers `{ echo: true }` (or what `reply` says). */
export async function startEchoUpstream(
  reply?: (req: { url: string }) => { status: number; headers?: Record<string, string>; body?: string },
): Promise<EchoUpstream> {
  let last: ReturnType<EchoUpstream['last']>;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      last = { method: req.method!, url: req.url!, headers: req.headers, body };
      const answer = reply?.({ url: req.url! }) ?? { status: 200, headers: { 'content-type': 'application/json' }, body: '{"echo":true}' };
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
  // longer than the data plane's idle upstream keep-alive (60 s, Kong's upstream_keepalive_idle_timeout),
  // as the backend's: else nginx may reuse a connection node is closing (a reset, an [error] line)
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    last: () => last,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
