import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../backend/src/db/connect.ts';
import { spawnTs, type SpawnedProcess } from '../helpers/process.ts';
import { benchLargeBodies } from './large-bodies.ts';
import { load, loadAlternating, progress, ratio, type LoadOptions, type LoadResult } from './load.ts';
import { nginxAvailable, startNginxProxy } from './nginx-proxy.ts';
import { seedPets } from './seed.ts';
import { generateApiKey, storedCredential } from '../../scripts/lib/api-keys.ts';

export interface GatewayBenchResult {
  runs: LoadResult[];
  ratios: Record<string, { value: number; target: string; ok: boolean }>;
  gatewayRssMb: number;
}

const NO_PLUGINS = (backendUrl: string) => `_format_version: "3.0"
services:
  - name: animal-store-backend
    url: ${backendUrl}
    routes:
      - name: animal-store-v1
        paths: [/v1/]
`;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
}

async function startGatewayProcess(
  dir: string,
  name: string,
  configFile: string,
  backendUrl: string,
): Promise<{ proc: SpawnedProcess; proxy: string; admin: string; nginxPid: number }> {
  const proc = spawnTs('gateway/local/cmd/start.ts', [], {
    KONG_DECLARATIVE_CONFIG: configFile,
    KONG_PROXY_LISTEN: '127.0.0.1:0',
    KONG_ADMIN_LISTEN: '127.0.0.1:0',
    KONG_STATUS_LISTEN: 'off',
    KONG_PREFIX: join(dir, `${name}-prefix`),
    GATEWAY_DATA_FILE: join(dir, `${name}.sqlite`),
    DECK_ANIMAL_STORE_BACKEND_URL: backendUrl,
  });
  const [, proxy, admin] = await proc.waitFor(/proxy (\S+), Admin API (\S+);/, 60_000);
  const nginxPid = Number(readFileSync(join(dir, `${name}-prefix`, 'node', 'pids', 'nginx.pid'), 'utf8'));
  return { proc, proxy: proxy!, admin: admin!, nginxPid };
}

async function post(url: string, body: unknown): Promise<any> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * Backend, full-chain gateway and no-plugin gateway each in their own process (as in production),
 * the load generator in a worker thread of this one.
 */
export async function benchGateway(options: { durationSeconds: number }): Promise<GatewayBenchResult> {
  const { durationSeconds } = options;
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-gateway-bench-'));
  const processes: SpawnedProcess[] = [];
  try {
    progress('seeding 10000 pets');
    const db = await openDatabase({ dataDir: join(dir, 'backend') });
    await seedPets(db, 10_000);
    await db.destroy();
    const backend = spawnTs('backend/src/main.ts', [], { BACKEND_PORT: '0', DATA_DIR: join(dir, 'backend') });
    processes.push(backend);
    const [, backendUrl] = await backend.waitFor(/listening on (\S+)/);

    progress('starting the gateways');
    const full = await startGatewayProcess(dir, 'full', join(process.cwd(), 'gateway/kong.yml'), backendUrl!);
    processes.push(full.proc);
    const bareConfig = join(dir, 'no-plugins.yml');
    writeFileSync(bareConfig, NO_PLUGINS(backendUrl!));
    const bare = await startGatewayProcess(dir, 'bare', bareConfig, backendUrl!);
    processes.push(bare.proc);

    await post(`${full.admin}/consumers`, { username: 'bench' });
    // stored as the CLI stores keys (the edge plugin authenticates hashed credentials only)
    const key = generateApiKey();
    await post(`${full.admin}/consumers/bench/key-auth`, storedCredential(key, []));
    await post(`${full.admin}/consumers/bench/plugins`, { name: 'rate-limiting', config: { minute: 1e9, day: 1e10 } });
    const auth = { authorization: `Bearer ${key}` };

    const scenarios: Record<'direct' | 'chain' | 'noPlugins', LoadOptions> = {
      direct: { name: 'backend direct GET /pets?limit=20', url: `${backendUrl}/pets?limit=20`, durationSeconds, cpuOfPid: backend.child.pid },
      chain: { name: 'gateway, full plugin chain', url: `${full.proxy}/v1/pets?limit=20`, headers: auth, durationSeconds, cpuOfPid: full.nginxPid },
      noPlugins: { name: 'gateway, route without plugins', url: `${bare.proxy}/v1/pets?limit=20`, durationSeconds, cpuOfPid: bare.nginxPid },
    };
    // Steady state only: every server's JIT and connection pools warmed up before anything counts.
    for (const scenario of Object.values(scenarios)) await load({ ...scenario, name: `${scenario.name} (warm-up)`, durationSeconds: 1 });
    const direct = await load(scenarios.direct);
    // The two gateways whose ratio is a target, side by side in alternating rounds.
    const [chain, noPlugins] = (await loadAlternating([scenarios.chain, scenarios.noPlugins], 3)) as [LoadResult, LoadResult];
    const wide = await load({ name: 'gateway, full chain, 64 connections', url: `${full.proxy}/v1/pets?limit=20`, headers: auth, durationSeconds, connections: 64, cpuOfPid: full.nginxPid });
    const gatewayRssMb = rssMb(full.proc.child.pid!);
    const runs = [direct, chain, noPlugins, wide];
    const bodies = await benchLargeBodies(full.proxy, key, full.proc.child.pid!);
    progress(`large bodies: ${bodies.statuses.join(' ')}, answered after ${bodies.sentMbAtAnswer.join('/')} MB sent, peak RSS ${bodies.peakRssMb} MB`);

    let nginxRatio: GatewayBenchResult['ratios'] = {};
    if (nginxAvailable()) {
      const nginx = await startNginxProxy(join(dir, 'nginx'), backendUrl!);
      try {
        const proxied = await load({ name: 'nginx reverse proxy (reference)', url: `${nginx.url}/v1/pets?limit=20`, durationSeconds, cpuOfPid: nginx.pid });
        runs.push(proxied);
        nginxRatio = { 'reference: nginx proxy / backend direct': { value: ratio(proxied.rps, direct.rps), target: '-', ok: true } };
      } finally {
        await nginx.stop();
      }
    } else {
      progress('nginx is not installed (Debian: nginx-light): the nginx reference row is skipped');
    }

    const throughCost = ratio(chain.rps, direct.rps);
    const chainCost = ratio(chain.rps, noPlugins.rps);
    return {
      runs,
      gatewayRssMb,
      ratios: {
        'gateway (full chain) / backend direct RPS': { value: throughCost, target: '>= 0.5', ok: throughCost >= 0.5 },
        ...nginxRatio,
        'full chain / no-plugin route RPS': { value: chainCost, target: '>= 0.8', ok: chainCost >= 0.8 },
        // No targets: where the chain's CPU goes against what 0.8 leaves it (a quarter of the no-plugin route's).
        'reference: CPU µs/req the chain may add at 0.8': { value: Math.round((noPlugins.cpuMicrosPerRequest ?? 0) / 4), target: '-', ok: true },
        'reference: CPU µs/req the chain adds': { value: (chain.cpuMicrosPerRequest ?? 0) - (noPlugins.cpuMicrosPerRequest ?? 0), target: '-', ok: true },
        'gateway p99 ms at 64 connections': { value: wide.p99, target: '<= 20', ok: wide.p99 <= 20 },
        'gateway RSS MB after load': { value: gatewayRssMb, target: '<= 150', ok: gatewayRssMb <= 150 },
        'gateway peak RSS MB, 4 x 256 MB bodies': { value: bodies.peakRssMb, target: '< 300', ok: bodies.peakRssMb < 300 },
        // Every body refused with request-size-limiting's 413 before it was sent whole.
        'large bodies answered 413 early (of 4)': {
          value: bodies.statuses.filter((status, i) => status === 413 && bodies.sentMbAtAnswer[i]! < 256).length,
          target: '4',
          ok: bodies.statuses.every((status, i) => status === 413 && bodies.sentMbAtAnswer[i]! < 256),
        },
      },
    };
  } finally {
    for (const proc of processes) proc.child.kill('SIGTERM');
    await Promise.all(processes.map((proc) => proc.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}
