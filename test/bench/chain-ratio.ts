import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpawnedProcess } from '../helpers/process.ts';
import { provisionBenchConsumer } from './admin.ts';
import { startGatewayProcess } from './gateway-process.ts';
import type { Figure } from './gateway-bench.ts';
import { formatSpread, progress, spread, type Spread } from './load.ts';
import { childrenOf, processTree, reloadNginx } from './processes.ts';
import { startSeededBackend } from './seed.ts';
import { startStaticUpstream } from './static-upstream.ts';
import { wrk, type WrkOptions } from './wrk.ts';

/** Rounds a pair of workers runs before nginx replaces both; the warm-up each pair gets first, s. */
const ROUNDS_PER_WORKER = 3;
const WARM_UP_SECONDS = 3;

/** A gateway config of one route without plugins to `backendUrl`: the chain's baseline. */
export const NO_PLUGINS = (backendUrl: string) => `_format_version: "3.0"
services:
  - name: animal-store-backend
    url: ${backendUrl}
    routes:
      - name: animal-store-v1
        paths: [/v1/]
`;

interface ChainRatioRound {
  chainCpu: number;
  bareCpu: number;
  chainRps: number;
  bareRps: number;
}

export interface ChainRatioResult {
  /** The full chain's CPU per request over the route without plugins', round by round. */
  ratio: Spread;
  chainCpu: Spread;
  bareCpu: Spread;
  /** Whether both workers shared one CPU of their own (taskset), the loads on the others. */
  pinned: boolean;
  rounds: ChainRatioRound[];
}

function taskset(cpus: string, pids: number[]): void {
  for (const pid of pids) {
    const result = spawnSync('taskset', ['-apc', cpus, String(pid)], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`taskset -apc ${cpus} ${pid}: ${result.error?.message ?? result.stderr}`);
  }
}

/**
 * Issue 33's primary figure, measured so that it holds from run to run on a shared machine: the
 * full chain's CPU per request over the route without plugins, both loaded AT ONCE, each gateway
 * with one nginx worker, both workers pinned to the same CPU (the last), wrk (one per gateway),
 * the upstream and the control planes on the others. Whatever else the machine does in a round
 * (other processes, the host's speed, cache pressure) falls on both workers alike within the same
 * seconds, and the ratio of their CPU per request cancels it; measured one after the other, a few
 * seconds apart, the two moved independently and the ratio by ±0.2 from round to round. The
 * upstream is one nginx worker answering the backend's own `/pets?limit=20` body from memory,
 * the same for both and steady. CPU is the scheduler's count for the workers and their master.
 * The figure is the median of `rounds` rounds of `durationSeconds`, nginx replacing both workers
 * every ROUNDS_PER_WORKER rounds.
 */
export async function measureChainRatio(options: {
  dir: string;
  backendUrl: string;
  processes: SpawnedProcess[];
  rounds: number;
  durationSeconds: number;
  connections?: number;
}): Promise<ChainRatioResult> {
  const { dir, backendUrl, processes, rounds, durationSeconds, connections = 64 } = options;
  const path = '/v1/pets?limit=20';
  const body = await (await fetch(`${backendUrl}/pets?limit=20`)).text();
  const upstream = await startStaticUpstream(join(dir, 'ratio-upstream'), body);
  try {
    const fullConfig = ['gateway/platform/kong.yml', 'gateway/kong.yml'].map((file) => join(process.cwd(), file)).join(',');
    const full = await startGatewayProcess(dir, 'ratio-full', fullConfig, upstream.url, { workers: 1 });
    processes.push(full.proc);
    const bareConfig = join(dir, 'ratio-no-plugins.yml');
    writeFileSync(bareConfig, NO_PLUGINS(upstream.url));
    const bare = await startGatewayProcess(dir, 'ratio-bare', bareConfig, upstream.url, { workers: 1 });
    processes.push(bare.proc);
    const { key } = await provisionBenchConsumer(full.admin);

    const cpuCount = availableParallelism();
    const pinned = cpuCount >= 2 && spawnSync('taskset', ['-V']).status === 0;
    const others = cpuCount === 2 ? '0' : `0-${cpuCount - 2}`;
    const pinWorkers = () => taskset(String(cpuCount - 1), [...childrenOf(full.nginxPid), ...childrenOf(bare.nginxPid)]);
    if (pinned) {
      pinWorkers();
      taskset(others, [full.nginxPid, bare.nginxPid, full.pid, bare.pid, ...processTree(upstream.pid)]);
    }
    progress(pinned
      ? `chain ratio: both gateways' one worker on CPU ${cpuCount - 1}, wrk and the upstream on ${others}`
      : 'chain ratio: one CPU or no taskset: nothing pinned');
    const cpus = pinned ? others : undefined;
    const chain: WrkOptions = {
      name: 'ratio: full chain, 1 worker, static upstream',
      url: `${full.proxy}${path}`,
      headers: { authorization: `Bearer ${key}` },
      connections,
      durationSeconds,
      cpuOf: [full.nginxPid],
      cpus,
    };
    const bareLoad: WrkOptions = {
      name: 'ratio: route without plugins, 1 worker, static upstream',
      url: `${bare.proxy}${path}`,
      connections,
      durationSeconds,
      cpuOf: [bare.nginxPid],
      cpus,
    };
    const both = async (seconds: number) => {
      const runs = await Promise.all([wrk({ ...chain, durationSeconds: seconds }), wrk({ ...bareLoad, durationSeconds: seconds })]);
      for (const run of runs) {
        if (run.non2xx > 0 || run.errors > 0) throw new Error(`${run.name}: ${run.non2xx} answers other than 2xx, ${run.errors} errors: not the path measured`);
      }
      return runs;
    };
    const measured: ChainRatioRound[] = [];
    for (let round = 0; round < rounds; round++) {
      // Fresh workers every few rounds: a worker's own JIT traces, heap and addresses set its cost
      // for its life (runs of one pair of workers differed by more than their rounds did), so
      // the figure takes several pairs. Each pair warms up first.
      if (round % ROUNDS_PER_WORKER === 0) {
        if (round > 0) {
          await Promise.all([reloadNginx(full.nginxPid), reloadNginx(bare.nginxPid)]);
          if (pinned) pinWorkers();
        }
        await both(WARM_UP_SECONDS);
      }
      const [chainRun, bareRun] = await both(durationSeconds);
      const chainCpu = chainRun.cpuMicrosPerRequest!;
      const bareCpu = bareRun.cpuMicrosPerRequest!;
      measured.push({ chainCpu, bareCpu, chainRps: chainRun.rps, bareRps: bareRun.rps });
      progress(`chain ratio, round ${round + 1} of ${rounds}: ${(chainCpu / bareCpu).toFixed(2)}`);
    }
    full.proc.child.kill('SIGTERM');
    bare.proc.child.kill('SIGTERM');
    await Promise.all([full.proc.exited, bare.proc.exited]);
    return {
      ratio: spread(measured.map((r) => r.chainCpu / r.bareCpu)),
      chainCpu: spread(measured.map((r) => r.chainCpu)),
      bareCpu: spread(measured.map((r) => r.bareCpu)),
      pinned,
      rounds: measured,
    };
  } finally {
    await upstream.stop();
  }
}

/** `npm run bench -- --only ratio`: the primary figure alone, with the machine's load around it. */
export async function benchChainRatio(rounds: number): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-chain-ratio-'));
  const processes: SpawnedProcess[] = [];
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  try {
    const before = load();
    const backend = await startSeededBackend(dir, processes);
    const result = await measureChainRatio({ dir, backendUrl: backend.url, processes, rounds, durationSeconds: 2 });
    const cpu = ({ median, min, max }: Spread) => `${median.toFixed(1)} (${min.toFixed(1)}-${max.toFixed(1)})`;
    return [
      {
        name: `full chain / route without plugins, CPU per request, median (${rounds} rounds at once${result.pinned ? ', 1 CPU' : ''})`,
        value: formatSpread(result.ratio),
        target: '<= 1.25',
        ok: result.ratio.median <= 1.25,
      },
      { name: '  CPU µs per request there: full chain; route without plugins', value: `${cpu(result.chainCpu)}; ${cpu(result.bareCpu)}` },
      { name: '  load average (1, 5, 15 min): before; after', value: `${before}; ${load()}` },
    ];
  } finally {
    for (const proc of processes) proc.child.kill('SIGTERM');
    await Promise.all(processes.map((proc) => proc.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}
