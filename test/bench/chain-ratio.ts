import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpawnedProcess } from '../helpers/process.ts';
import { adminRequest, provisionBenchConsumer } from './admin.ts';
import { digestApiKey, generateApiKey } from '../../packages/provisioning/index.ts';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts';
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

/**
 * The pair of Kong's own published figure (issue 33: key-auth + rate-limiting at 0.75 of no
 * plugins in req/s): both on the one route's service, local counts, a limit never reached, one
 * consumer and its key in the header. What our data plane makes of the plugins Kong measured,
 * beside the full chain's six.
 */
const KONG_PAIR = (backendUrl: string, key: string) => `${NO_PLUGINS(backendUrl)}    plugins:
      - name: key-auth
        config: { key_names: [apikey] }
      - name: rate-limiting
        config: { hour: 999999999999, policy: local, limit_by: consumer }
consumers:
  - username: bench
    keyauth_credentials:
      - key: ${key}
`;

/** What the loaded gateway runs: kong.yml's whole chain, or Kong's published pair alone. */
export type RatioLoad = 'full chain' | 'key-auth + rate-limiting';

interface ChainRatioRound {
  chainCpu: number;
  bareCpu: number;
  chainRps: number;
  bareRps: number;
}

export interface ChainRatioResult {
  load: RatioLoad;
  /** The load and the plugins it went without. */
  label: string;
  /** The loaded gateway's CPU per request over the route without plugins', round by round. */
  ratio: Spread;
  chainCpu: Spread;
  bareCpu: Spread;
  /** Whether both workers shared one CPU of their own (taskset), the loads on the others. */
  pinned: boolean;
  rounds: ChainRatioRound[];
}

/** Measurements so far in this process: each one's gateways get prefixes of their own. */
let measurements = 0;

/** Disables every instance of these plugins that is not a consumer's; the Admin API answers once the node runs it. */
async function disablePlugins(admin: string, names: string[]): Promise<void> {
  if (names.length === 0) return;
  const { data } = (await adminRequest('GET', `${admin}/plugins?size=1000`)) as { data: Array<{ id: string; name: string; consumer: unknown }> };
  for (const name of names) {
    const found = data.filter((plugin) => plugin.name === name && !plugin.consumer);
    if (found.length === 0) throw new Error(`the full chain runs no ${name} plugin`);
    for (const plugin of found) await adminRequest('PATCH', `${admin}/plugins/${plugin.id}`, { enabled: false });
  }
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
  /** Default: the full chain. */
  load?: RatioLoad;
  /** The full chain without these plugins (their instances other than a consumer's, disabled). */
  without?: string[];
}): Promise<ChainRatioResult> {
  const { dir, backendUrl, processes, rounds, durationSeconds, connections = 64, load = 'full chain', without = [] } = options;
  // short: the node's unix sockets live under its prefix, and a socket's path has 107 bytes at most
  const tag = `ratio-${++measurements}`;
  const label = without.length === 0 ? load : `${load} without ${without.join(' + ')}`;
  const path = '/v1/pets?limit=20';
  const body = await (await fetch(`${backendUrl}/pets?limit=20`)).text();
  const upstream = await startStaticUpstream(join(dir, 'ratio-upstream'), body);
  try {
    let headers: Record<string, string>;
    let full: GatewayProcess;
    if (load === 'full chain') {
      const fullConfig = ['gateway/platform/kong.yml', 'gateway/kong.yml'].map((file) => join(process.cwd(), file)).join(',');
      full = await startGatewayProcess(dir, `${tag}-full`, fullConfig, upstream.url, { workers: 1 });
      processes.push(full.proc);
      const { key } = await provisionBenchConsumer(full.admin);
      await disablePlugins(full.admin, without);
      // without the edge plugin, key-auth's header carries what the edge plugin would have put there
      headers = without.includes('animal-store-edge') ? { apikey: digestApiKey(key) } : { authorization: `Bearer ${key}` };
    } else {
      const key = generateApiKey();
      const pairConfig = join(dir, `${tag}-kong-pair.yml`);
      writeFileSync(pairConfig, KONG_PAIR(upstream.url, key));
      full = await startGatewayProcess(dir, `${tag}-kong-pair`, pairConfig, upstream.url, { workers: 1 });
      processes.push(full.proc);
      headers = { apikey: key };
    }
    const bareConfig = join(dir, `${tag}-no-plugins.yml`);
    writeFileSync(bareConfig, NO_PLUGINS(upstream.url));
    const bare = await startGatewayProcess(dir, `${tag}-bare`, bareConfig, upstream.url, { workers: 1 });
    processes.push(bare.proc);

    const cpuCount = availableParallelism();
    const pinned = cpuCount >= 2 && spawnSync('taskset', ['-V']).status === 0;
    const others = cpuCount === 2 ? '0' : `0-${cpuCount - 2}`;
    const pinWorkers = () => taskset(String(cpuCount - 1), [...childrenOf(full.nginxPid), ...childrenOf(bare.nginxPid)]);
    if (pinned) {
      pinWorkers();
      taskset(others, [full.nginxPid, bare.nginxPid, full.pid, bare.pid, ...processTree(upstream.pid)]);
    }
    progress(pinned
      ? `${label} ratio: both gateways' one worker on CPU ${cpuCount - 1}, wrk and the upstream on ${others}`
      : `${label} ratio: one CPU or no taskset: nothing pinned`);
    const cpus = pinned ? others : undefined;
    const chain: WrkOptions = {
      name: `ratio: ${label}, 1 worker, static upstream`,
      url: `${full.proxy}${path}`,
      headers,
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
      progress(`${label} ratio, round ${round + 1} of ${rounds}: ${(chainCpu / bareCpu).toFixed(2)}`);
    }
    full.proc.child.kill('SIGTERM');
    bare.proc.child.kill('SIGTERM');
    await Promise.all([full.proc.exited, bare.proc.exited]);
    return {
      load,
      label,
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

/**
 * Kong's published pair beside the full chain: the same measurement, key-auth + rate-limiting on
 * the loaded gateway. No target: it says how our data plane's plugins compare with Kong's own
 * 0.75 in req/s (1 / 0.75 = 1.33 in CPU per request), where the full chain runs six plugins.
 */
const cpuSpread = ({ median, min, max }: Spread) => `${median.toFixed(1)} (${min.toFixed(1)}-${max.toFixed(1)})`;

export function kongPairFigures(result: ChainRatioResult, rounds: number): Figure[] {
  return [
    {
      name: `key-auth + rate-limiting alone / route without plugins, CPU per request, median (${rounds} rounds at once${result.pinned ? ', 1 CPU' : ''})`,
      value: `${formatSpread(result.ratio)}; Kong 3.9's published pair: 1.33 (0.75 in req/s)`,
    },
    { name: '  CPU µs per request there: key-auth + rate-limiting; route without plugins', value: `${cpuSpread(result.chainCpu)}; ${cpuSpread(result.bareCpu)}` },
  ];
}

type Measure = (more?: { load?: RatioLoad; without?: string[] }) => Promise<ChainRatioResult>;

/**
 * A `--only ratio…` run: the seeded backend the ratio's upstream copies, in a directory of its
 * own, `figures` measured with it (`rounds` rounds of 2 s a measurement), the machine's load around them;
 * every process stopped and the directory removed after.
 */
async function ratioRun(rounds: number, figures: (measure: Measure) => Promise<Figure[]>): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-chain-ratio-'));
  const processes: SpawnedProcess[] = [];
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  try {
    const before = load();
    const backend = await startSeededBackend(dir, processes);
    const measure: Measure = (more = {}) =>
      measureChainRatio({ dir, backendUrl: backend.url, processes, rounds, durationSeconds: 2, ...more });
    const measured = await figures(measure);
    return [...measured, { name: '  load average (1, 5, 15 min): before; after', value: `${before}; ${load()}` }];
  } finally {
    for (const proc of processes) proc.child.kill('SIGTERM');
    await Promise.all(processes.map((proc) => proc.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `npm run bench -- --only ratio`: the primary figure alone, Kong's pair beside it. */
export function benchChainRatio(rounds: number): Promise<Figure[]> {
  return ratioRun(rounds, async (measure) => {
    const result = await measure();
    const pair = await measure({ load: 'key-auth + rate-limiting' });
    return [
      {
        name: `full chain / route without plugins, CPU per request, median (${rounds} rounds at once${result.pinned ? ', 1 CPU' : ''})`,
        value: formatSpread(result.ratio),
        target: '<= 1.25',
        ok: result.ratio.median <= 1.25,
      },
      { name: '  CPU µs per request there: full chain; route without plugins', value: `${cpuSpread(result.chainCpu)}; ${cpuSpread(result.bareCpu)}` },
      ...kongPairFigures(pair, rounds),
    ];
  });
}

/**
 * `npm run bench -- --only ratio-plugins`: where the full chain's ratio goes beyond Kong's pair,
 * each measured as the primary figure is, against its own route without plugins: the full chain,
 * the chain without each of the pieces Kong's pair does not have, and the pair. No targets.
 */
export function benchChainRatioByPlugin(rounds: number): Promise<Figure[]> {
  return ratioRun(rounds, async (measure) => {
    const results: ChainRatioResult[] = [];
    for (const variant of [
      {},
      { without: ['prometheus'] },
      { without: ['animal-store-edge'] },
      { without: ['animal-store-access', 'animal-store-body-limit'] },
      { load: 'key-auth + rate-limiting' as const },
    ]) {
      results.push(await measure(variant));
    }
    const full = results[0]!.ratio.median;
    return [
      ...results.map((result) => ({
        name: `${result.label} / route without plugins, CPU per request (${rounds} rounds at once)`,
        value: `${formatSpread(result.ratio)}; ${cpuSpread(result.chainCpu)} µs; ${cpuSpread(result.bareCpu)} µs`,
      })),
      ...results.slice(1, -1).map((result) => ({
        name: `  ${result.label.replace('full chain without ', '')}: the full chain's ratio - without it`,
        value: (full - result.ratio.median).toFixed(2),
      })),
    ];
  });
}
