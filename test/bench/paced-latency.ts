import { join } from 'node:path';
import type { SpawnedProcess } from '../helpers/process.ts';
import { provisionBenchConsumer } from './admin.ts';
import { startGatewayProcess } from './gateway-process.ts';
import { startNginxProxy, type NginxProxy } from './nginx-proxy.ts';
import { startStaticUpstream, type StaticUpstream } from './static-upstream.ts';
import { wrk, wrkAtOnce, type WrkOptions, type WrkResult } from './wrk.ts';

export interface PacedLatencyResult {
  /** Merged over the rounds: p50 and p99 are the median round's. */
  chain: WrkResult;
  nginx: WrkResult;
  upstream: WrkResult;
  /** Round by round, [chain, nginx, upstream]. */
  rounds: WrkResult[][];
}

/**
 * Latency below saturation (issue 33's p99 at 64 connections): the full chain, plain nginx and
 * their upstream alone, each 64 connections paced to `ratePerSecond`, all three at once, in
 * rounds. On a shared two-core machine a p99 is the scheduler's (a worker, or wrk itself, waiting
 * 10-45 ms for a core: docs/benchmark.md, "The p99 tail"); at once, such a stall falls on the
 * three alike, and the chain's p99 beyond plain nginx's in the same round is the chain's own.
 * The upstream is test/bench/static-upstream.ts answering the backend's `/pets?limit=20` body:
 * the Node backend's own tail (its GC, its queue under three loads) is not counted in anyone's.
 */
export async function measurePacedLatency(options: {
  dir: string;
  backendUrl: string;
  processes: SpawnedProcess[];
  /** The node's nginx worker count, which plain nginx runs too. */
  workers: number;
  ratePerSecond: number;
  rounds: number;
  durationSeconds: number;
}): Promise<PacedLatencyResult> {
  const { dir, backendUrl, processes, workers, ratePerSecond, rounds, durationSeconds } = options;
  const path = '/v1/pets?limit=20';
  const body = await (await fetch(`${backendUrl}/pets?limit=20`)).text();
  let upstream: StaticUpstream | undefined;
  let nginx: NginxProxy | undefined;
  let gateway: SpawnedProcess | undefined;
  try {
    upstream = await startStaticUpstream(join(dir, 'paced-upstream'), body);
    const fullConfig = ['gateway/platform/kong.yml', 'gateway/kong.yml'].map((file) => join(process.cwd(), file)).join(',');
    const full = await startGatewayProcess(dir, 'paced-full', fullConfig, upstream.url);
    gateway = full.proc;
    processes.push(full.proc);
    nginx = await startNginxProxy(join(dir, 'paced-nginx'), upstream.url, workers);
    const { key } = await provisionBenchConsumer(full.admin);
    const paced = { connections: 64, ratePerSecond, durationSeconds };
    const scenarios: WrkOptions[] = [
      { name: 'paced: full chain, static upstream', url: `${full.proxy}${path}`, headers: { authorization: `Bearer ${key}` }, ...paced },
      { name: `paced: nginx plain proxy (${workers} workers), static upstream`, url: `${nginx.url}${path}`, ...paced },
      { name: 'paced: the static upstream alone', url: `${upstream.url}/pets?limit=20`, ...paced },
    ];
    for (const scenario of scenarios) {
      const warm = await wrk({ ...scenario, name: `${scenario.name} (warm-up)`, durationSeconds: 2 });
      if (warm.non2xx > 0 || warm.errors > 0) throw new Error(`${warm.name}: ${warm.non2xx} answers other than 2xx, ${warm.errors} errors: not the path measured`);
    }
    const { merged, rounds: perRound } = await wrkAtOnce(scenarios, rounds);
    const [chain, nginxResult, upstreamResult] = merged as [WrkResult, WrkResult, WrkResult];
    return { chain, nginx: nginxResult, upstream: upstreamResult, rounds: perRound };
  } finally {
    await nginx?.stop();
    if (gateway) {
      gateway.child.kill('SIGTERM');
      await gateway.exited;
    }
    await upstream?.stop();
  }
}
