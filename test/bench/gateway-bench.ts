import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../backend/src/db/connect.ts';
import { spawnTs, type SpawnedProcess } from '../helpers/process.ts';
import type { PieceCost } from './chain-pieces.ts';
import { benchLargeBodies } from './large-bodies.ts';
import { load, loadAlternating, progress, ratio, type LoadOptions, type LoadResult } from './load.ts';
import { topSelfTime } from './cpu-profile.ts';
import { nginxAvailable, startNginxProxy } from './nginx-proxy.ts';
import { seedPets } from './seed.ts';

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
  profileFile?: string,
): Promise<{ proc: SpawnedProcess; proxy: string; admin: string; lua: string }> {
  const proc = spawnTs('test/bench/gateway-only.ts', [], {
    ...(profileFile ? { BENCH_PROFILE_FILE: profileFile } : {}),
    KONG_DECLARATIVE_CONFIG: configFile,
    KONG_PROXY_LISTEN: '127.0.0.1:0',
    KONG_ADMIN_LISTEN: '127.0.0.1:0',
    GATEWAY_DATA_FILE: join(dir, `${name}.sqlite`),
    DECK_ANIMAL_STORE_BACKEND_URL: backendUrl,
    // As `npm start` runs it: a 4 MB young generation keeps RSS ~20 MB lower at no measurable cost.
    NODE_OPTIONS: '--max-semi-space-size=4',
  });
  const [, proxy, admin, lua] = await proc.waitFor(/gateway ready (\S+) (\S+) (\S+)/, 60_000);
  return { proc, proxy: proxy!, admin: admin!, lua: lua! };
}

async function post(url: string, body: unknown): Promise<any> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** One load run with a gateway's CPU profiler on (SIGUSR2 around it): the profile and the requests it covers. */
async function profiledRun(gateway: SpawnedProcess, run: () => Promise<LoadResult>): Promise<number> {
  gateway.child.kill('SIGUSR2');
  await gateway.waitFor(/profiling started/);
  const result = await run();
  gateway.child.kill('SIGUSR2');
  await gateway.waitFor(/profile written/);
  return result.requests;
}

/** Where the chain's time goes: both gateways' top functions by self time, side by side. */
function printProfiles(chain: { file: string; requests: number }, bare: { file: string; requests: number }): void {
  console.log(`\nCPU profiles under load: ${chain.file} (full chain), ${bare.file} (route without plugins)`);
  console.log('top functions by self time, µs per request (the profiler itself adds some); the difference is what the chain adds:');
  const withoutPlugins = new Map(topSelfTime(bare.file, bare.requests, Infinity).map((row) => [row.name, row.microsPerRequest]));
  console.log(`${'chain'.padStart(8)} ${'bare'.padStart(8)} ${'added'.padStart(8)}  function`);
  for (const { name, microsPerRequest } of topSelfTime(chain.file, chain.requests, 30)) {
    const bareMicros = withoutPlugins.get(name) ?? 0;
    const added = Math.round((microsPerRequest - bareMicros) * 10) / 10;
    console.log(`${String(microsPerRequest).padStart(8)} ${String(bareMicros).padStart(8)} ${String(added).padStart(8)}  ${name}`);
  }
  const total = (file: string, requests: number) =>
    Math.round(topSelfTime(file, requests, Infinity).reduce((sum, row) => sum + row.microsPerRequest, 0));
  console.log(`${String(total(chain.file, chain.requests)).padStart(8)} ${String(total(bare.file, bare.requests)).padStart(8)}           busy in all`);
}

/**
 * Backend, full-chain gateway and no-plugin gateway each in their own process (as in production),
 * the load generator in a worker thread of this one.
 */
export async function benchGateway(options: { durationSeconds: number; profile?: boolean }): Promise<GatewayBenchResult> {
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
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const profileFile = (name: string) => (options.profile ? join(tmpdir(), `animal-store-gateway-${stamp}-${name}.cpuprofile`) : undefined);
    const full = await startGatewayProcess(dir, 'full', join(process.cwd(), 'gateway/kong.yml'), backendUrl!, profileFile('chain'));
    processes.push(full.proc);
    const bareConfig = join(dir, 'no-plugins.yml');
    writeFileSync(bareConfig, NO_PLUGINS(backendUrl!));
    const bare = await startGatewayProcess(dir, 'bare', bareConfig, backendUrl!, profileFile('bare'));
    processes.push(bare.proc);
    const bareProxy = spawnTs('test/bench/bare-proxy.ts', [], { UPSTREAM_URL: backendUrl!, NODE_OPTIONS: '--max-semi-space-size=4' });
    processes.push(bareProxy);
    const [, bareProxyUrl] = await bareProxy.waitFor(/bare proxy ready (\S+)/);

    await post(`${full.admin}/consumers`, { username: 'bench' });
    const { key } = await post(`${full.admin}/consumers/bench/key-auth`, {});
    await post(`${full.admin}/consumers/bench/plugins`, { name: 'rate-limiting', config: { minute: 1e9, day: 1e10 } });
    const auth = { authorization: `Bearer ${key}` };

    const scenarios: Record<'direct' | 'chain' | 'noPlugins' | 'ceiling', LoadOptions> = {
      direct: { name: 'backend direct GET /pets?limit=20', url: `${backendUrl}/pets?limit=20`, durationSeconds, cpuOfPid: backend.child.pid },
      chain: { name: 'gateway, full plugin chain', url: `${full.proxy}/v1/pets?limit=20`, headers: auth, durationSeconds, cpuOfPid: full.proc.child.pid },
      noPlugins: { name: 'gateway, route without plugins', url: `${bare.proxy}/v1/pets?limit=20`, durationSeconds, cpuOfPid: bare.proc.child.pid },
      ceiling: { name: 'bare node proxy (reference)', url: `${bareProxyUrl}/v1/pets?limit=20`, durationSeconds, cpuOfPid: bareProxy.child.pid },
    };
    // Steady state only: every server's JIT and connection pools warmed up before anything counts.
    for (const scenario of Object.values(scenarios)) await load({ ...scenario, name: `${scenario.name} (warm-up)`, durationSeconds: 1 });
    const direct = await load(scenarios.direct);
    // The two gateways whose ratio is a target, side by side in alternating rounds.
    const [chain, noPlugins] = (await loadAlternating([scenarios.chain, scenarios.noPlugins], 3)) as [LoadResult, LoadResult];
    const ceiling = await load(scenarios.ceiling);
    const wide = await load({ name: 'gateway, full chain, 64 connections', url: `${full.proxy}/v1/pets?limit=20`, headers: auth, durationSeconds, connections: 64, cpuOfPid: full.proc.child.pid });
    const gatewayRssMb = rssMb(full.proc.child.pid!);
    const runs = [direct, chain, noPlugins, ceiling, wide];
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

    if (options.profile) {
      const chainRequests = await profiledRun(full.proc, () =>
        load({ name: 'gateway, full plugin chain (profiled)', url: `${full.proxy}/v1/pets?limit=20`, headers: auth, durationSeconds, cpuOfPid: full.proc.child.pid }),
      );
      const bareRequests = await profiledRun(bare.proc, () =>
        load({ name: 'gateway, route without plugins (profiled)', url: `${bare.proxy}/v1/pets?limit=20`, durationSeconds, cpuOfPid: bare.proc.child.pid }),
      );
      printProfiles({ file: profileFile('chain')!, requests: chainRequests }, { file: profileFile('bare')!, requests: bareRequests });
    }

    const luaMicros: Record<string, number> = {};
    for (const vm of ['luajit', 'wasmoon']) {
      const luaProcess = spawnTs('test/bench/lua-only.ts', [], { BENCH_SECONDS: String(durationSeconds), LUA_VM: vm });
      processes.push(luaProcess);
      try {
        const [, plugin, bookkeeping, noop] = await luaProcess.waitFor(/lua plugin µs (\S+) bookkeeping (\S+) noop (\S+)/, 120_000);
        luaMicros[vm] = Number(plugin);
        luaMicros.bookkeeping = Number(bookkeeping);
        if (vm === 'luajit') luaMicros.luajitNoop = Number(noop);
      } catch {
        progress(`the ${vm} VM is not available here: ${luaProcess.output().split('\n').find((l) => l.includes('Error')) ?? ''}`);
      }
    }

    // Where the chain's time goes, piece by piece (in process, the request's bookkeeping apart).
    const pieces: GatewayBenchResult['ratios'] = {};
    const piecesProcess = spawnTs('test/bench/pieces-only.ts', [], { BENCH_SECONDS: String(Math.min(2, durationSeconds)) });
    processes.push(piecesProcess);
    try {
      const [, json] = await piecesProcess.waitFor(/chain pieces (.*)/, 120_000);
      for (const { name, micros } of (JSON.parse(json!) as { pieces: PieceCost[] }).pieces) {
        pieces[`piece µs/req: ${name}`] = { value: micros, target: '-', ok: true };
      }
    } catch {
      progress(`the chain's pieces could not be measured: ${piecesProcess.output().split('\n').find((l) => l.includes('Error')) ?? ''}`);
    }

    const throughCost = ratio(chain.rps, direct.rps);
    const chainCost = ratio(chain.rps, noPlugins.rps);
    progress(`the full-chain gateway runs its Lua plugin on ${full.lua}`);
    return {
      runs,
      gatewayRssMb,
      ratios: {
        'gateway (full chain) / backend direct RPS': { value: throughCost, target: '>= 0.5', ok: throughCost >= 0.5 },
        // No target: how close any Node proxy gets to the backend on this machine.
        'reference: bare node proxy / backend direct': { value: ratio(ceiling.rps, direct.rps), target: '-', ok: true },
        ...nginxRatio,
        'full chain / no-plugin route RPS': { value: chainCost, target: '>= 0.8', ok: chainCost >= 0.8 },
        // No targets: where the chain's CPU goes against what 0.8 leaves it (a quarter of the no-plugin route's).
        'reference: CPU µs/req the chain may add at 0.8': { value: Math.round((noPlugins.cpuMicrosPerRequest ?? 0) / 4), target: '-', ok: true },
        'reference: CPU µs/req the chain adds': { value: (chain.cpuMicrosPerRequest ?? 0) - (noPlugins.cpuMicrosPerRequest ?? 0), target: '-', ok: true },
        // In process, through the bridge (the plugin's three phases for one request), per VM.
        ...(luaMicros.luajit === undefined ? {} : { 'edge plugin in process, LuaJIT µs/req': { value: luaMicros.luajit, target: '<= 3', ok: luaMicros.luajit <= 3 } }),
        // Of the LuaJIT row: what the same three phase calls cost when the plugin does nothing.
        ...(luaMicros.luajitNoop === undefined ? {} : { 'reference: of which the bridge (no-op plugin)': { value: luaMicros.luajitNoop, target: '-', ok: true } }),
        ...(luaMicros.wasmoon === undefined ? {} : { 'reference: same plugin, wasmoon µs/req': { value: luaMicros.wasmoon, target: '-', ok: true } }),
        // Not part of the two rows above: the request context and response headers the proxy builds anyway.
        'reference: request bookkeeping µs (apart)': { value: luaMicros.bookkeeping ?? 0, target: '-', ok: true },
        ...pieces,
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
