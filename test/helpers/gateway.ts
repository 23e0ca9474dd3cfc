import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type GatewayOptions, type RunningGateway } from '../../gateway/local/gateway.ts';
import { GATEWAY_DIR } from '../../gateway/local/settings.ts';
import { ManualClock } from './clock.ts';

export const KONG_YML = join(GATEWAY_DIR, 'kong.yml');
export const PLUGINS_DIR = join(GATEWAY_DIR, 'plugins');

export interface TestGateway extends RunningGateway {
  clock: ManualClock;
  dir: string;
  logs: string[];
  dispose(): Promise<void>;
}

/** A local gateway on ephemeral loopback ports, its own SQLite file and a manual clock. */
export async function startTestGateway(
  options: Partial<GatewayOptions> & { configFile: string; clock?: ManualClock; dir?: string },
): Promise<TestGateway> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'gateway-'));
  const clock = options.clock ?? new ManualClock(Date.UTC(2030, 0, 1, 12, 0, 0));
  const logs: string[] = [];
  const gateway = await startGateway({
    pluginsDir: PLUGINS_DIR,
    dataFile: join(dir, 'gateway.sqlite'),
    proxyHost: '127.0.0.1',
    proxyPort: 0,
    adminPort: 0,
    sharedDicts: ['animal_store_edge'],
    now: clock.now,
    log: (level, message) => logs.push(`${level}: ${message}`),
    ...options,
  });
  return Object.assign<RunningGateway, Omit<TestGateway, keyof RunningGateway>>(gateway, {
    clock,
    dir,
    logs,
    async dispose() {
      await gateway.close();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  });
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    last: () => last,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export { tmpdir };
