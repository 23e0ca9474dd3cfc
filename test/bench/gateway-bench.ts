import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestApiKey } from '../../packages/provisioning/index.ts';
import type { SpawnedProcess } from '../helpers/process.ts';
import { provisionBenchConsumer } from './admin.ts';
import { measureBreakdown, type BreakdownResult } from './breakdown.ts';
import { kongPairFigures, measureChainRatio, NO_PLUGINS, type ChainRatioResult } from './chain-ratio.ts';
import { profileChain } from './lua-profile.ts';
import { benchLargeBodies, type LargeBodiesResult } from './large-bodies.ts';
import { formatSpread, progress, spread, type Spread } from './load.ts';
import { nginxAvailable, nodeTlsDirectives, startNginxProxy, type NginxProxy } from './nginx-proxy.ts';
import { startGatewayProcess } from './gateway-process.ts';
import { measurePacedLatency } from './paced-latency.ts';
import { childrenOf, gatewayProcesses, memoryOf, processTree, type Memory } from './processes.ts';
import { startSeededBackend } from './seed.ts';
import { wrk, wrkAlternating, type WrkOptions, type WrkResult } from './wrk.ts';

/** One line of the table: a figure, its target when it has one, and whether it meets it. */
export interface Figure {
  name: string;
  value: number | string;
  target?: string;
  ok?: boolean;
}

export interface GatewayBenchResult {
  /** The node's nginx worker count (worker_processes auto), which the nginx reference runs too. */
  workers: number;
  runs: WrkResult[];
  figures: Figure[];
  memoryAfterLoad: { controlPlane: Memory; nginx: Memory; total: Memory };
  largeBodies: LargeBodiesResult;
  breakdown: BreakdownResult;
  /** The side-by-side figures round by round: their medians and spreads. */
  ratios: Record<string, Spread>;
  /** jit.p's report for each worker of the node, with --profile. */
  luaProfile?: string;
  /** The primary figure's own measurement (test/bench/chain-ratio.ts), round by round. */
  chainRatio: ChainRatioResult;
  /** Kong's published pair, key-auth + rate-limiting, measured the same way. */
  pairRatio: ChainRatioResult;
}

type Scenario = 'direct' | 'nginx' | 'nginxLua' | 'bare' | 'chain' | 'chainTls';

/**
 * The gateway figures of issue 20, in one run: the backend, the gateway running gateway/kong.yml
 * (the full chain, a provisioned key), the same gateway with a route without plugins, and a plain
 * nginx proxy with the node's worker count, each in processes of their own, driven by wrk in
 * alternating rounds; then latency at 64 connections, memory, four 256 MB bodies, and the chain's
 * cost plugin by plugin.
 */
export async function benchGateway(options: {
  durationSeconds: number;
  rounds: number;
  /** Rounds of the primary figure's simultaneous loads (2 s each). */
  ratioRounds: number;
  profile: boolean;
}): Promise<GatewayBenchResult> {
  const { durationSeconds, rounds } = options;
  if (!nginxAvailable()) throw new Error('the gateway bench needs nginx (Debian: nginx-light, libnginx-mod-http-lua)');
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-gateway-bench-'));
  const processes: SpawnedProcess[] = [];
  let nginx: NginxProxy | undefined;
  let nginxLua: NginxProxy | undefined;
  let nginxTls: NginxProxy | undefined;
  try {
    progress('seeding 10000 pets');
    const backend = await startSeededBackend(dir, processes);
    const backendUrl = backend.url;

    progress('the primary figure: full chain against the route without plugins, loaded at once');
    const chainRatio = await measureChainRatio({ dir, backendUrl, processes, rounds: options.ratioRounds, durationSeconds: 2 });
    progress('beside it, Kong\'s published pair (key-auth + rate-limiting) against the route without plugins, the same way');
    const pairRatio = await measureChainRatio({ dir, backendUrl, processes, rounds: options.ratioRounds, durationSeconds: 2, load: 'key-auth + rate-limiting' });

    progress('starting the gateways');
    // as `npm start` runs it: the platform's file (prometheus, global) and ours
    const fullConfig = ['gateway/platform/kong.yml', 'gateway/kong.yml'].map((file) => join(process.cwd(), file)).join(',');
    const full = await startGatewayProcess(dir, 'full', fullConfig, backendUrl, { ssl: true });
    processes.push(full.proc);
    const bareConfig = join(dir, 'no-plugins.yml');
    writeFileSync(bareConfig, NO_PLUGINS(backendUrl));
    const bare = await startGatewayProcess(dir, 'bare', bareConfig, backendUrl);
    processes.push(bare.proc);
    const workers = childrenOf(full.nginxPid).length;
    nginx = await startNginxProxy(join(dir, 'nginx'), backendUrl, workers);
    nginxLua = await startNginxProxy(join(dir, 'nginx-lua'), backendUrl, workers, { emptyLuaPhases: true });
    progress(`the node runs ${workers} nginx workers; so do the nginx references`);

    const { key, scopedKey, planPluginId } = await provisionBenchConsumer(full.admin);
    const auth = { authorization: `Bearer ${key}` };
    const path = '/v1/pets?limit=20';

    const scenarios: Record<Scenario, WrkOptions> = {
      direct: { name: 'backend direct, GET /pets?limit=20', url: `${backendUrl}/pets?limit=20`, durationSeconds, cpuOf: [backend.pid] },
      nginx: { name: `nginx plain proxy (${workers} workers)`, url: `${nginx.url}${path}`, durationSeconds, cpuOf: [nginx.pid] },
      nginxLua: { name: 'nginx + the node\'s 6 *_by_lua hooks, empty', url: `${nginxLua.url}${path}`, durationSeconds, cpuOf: [nginxLua.pid] },
      bare: { name: 'gateway, route without plugins', url: `${bare.proxy}${path}`, durationSeconds, cpuOf: [bare.nginxPid] },
      chain: { name: 'gateway, full chain (kong.yml, a key)', url: `${full.proxy}${path}`, headers: auth, durationSeconds, cpuOf: [full.nginxPid] },
      chainTls: { name: 'gateway, full chain over https (keep-alive)', url: `${full.proxySsl!}${path}`, headers: auth, durationSeconds, cpuOf: [full.nginxPid] },
    };
    // Steady state only: JIT traces, connection pools and caches warm before anything counts.
    // A path refused (403, 429) is not the path measured: said after the warm-up, not minutes later.
    for (const scenario of Object.values(scenarios)) {
      const warm = await wrk({ ...scenario, name: `${scenario.name} (warm-up)`, durationSeconds: 2 });
      if (warm.non2xx > 0 || warm.errors > 0) throw new Error(`${warm.name}: ${warm.non2xx} answers other than 2xx, ${warm.errors} errors: not the path measured`);
    }
    const order: Scenario[] = ['direct', 'nginx', 'nginxLua', 'bare', 'chain', 'chainTls'];
    const alternating = await wrkAlternating(order.map((name) => scenarios[name]), rounds);
    const [direct, proxied, luaFloor, noPlugins, chain, chainTls] = alternating.merged as [
      WrkResult, WrkResult, WrkResult, WrkResult, WrkResult, WrkResult,
    ];
    const wide = await wrk({ ...scenarios.chain, name: 'gateway, full chain, 64 connections', connections: 64 });
    // A saturating closed loop answers each of its 64 connections every 64 / (req/s) seconds on
    // average (Little's law): its latencies are that queue. Latency is what a client sees below
    // saturation: 64 connections paced, the chain beside plain nginx and their upstream alone, at
    // once (test/bench/paced-latency.ts); a sixth of the chain's throughput each, half of it in
    // all; three times the rounds' seconds, the wall time the three would take one after another.
    const pacedRate = Math.round(chain.rps / 6);
    const paced = await measurePacedLatency({
      dir, backendUrl, processes, workers, ratePerSecond: pacedRate, rounds, durationSeconds: 3 * durationSeconds,
    });

    // New TLS connections per second, one nginx worker each: every request on a connection of its
    // own (wrk reconnects after `Connection: close`, a full handshake each, no session resumption),
    // the gateway's route without plugins beside plain nginx serving its certificates with its TLS
    // settings (Kong's intermediate suite), so that the gap is the node's, not the path's.
    progress('new TLS connections: a one-worker gateway and a one-worker nginx');
    const tlsOne = await startGatewayProcess(dir, 'tls-one', bareConfig, backendUrl, { ssl: true, workers: 1 });
    processes.push(tlsOne.proc);
    nginxTls = await startNginxProxy(join(dir, 'nginx-tls'), backendUrl, 1, { tlsDirectives: nodeTlsDirectives(tlsOne.nodePrefix) });
    const close = { connection: 'close' };
    const handshakes = {
      gateway: {
        name: 'new TLS conn/s: gateway, 1 worker, no plugins',
        url: `${tlsOne.proxySsl!}${path}`,
        headers: close,
        durationSeconds,
        cpuOf: [tlsOne.nginxPid],
      },
      nginx: { name: 'new TLS conn/s: nginx plain proxy, 1 worker', url: `${nginxTls.url}${path}`, headers: close, durationSeconds, cpuOf: [nginxTls.pid] },
    } satisfies Record<string, WrkOptions>;
    for (const scenario of Object.values(handshakes)) await wrk({ ...scenario, name: `${scenario.name} (warm-up)`, durationSeconds: 2 });
    const handshakeRounds = await wrkAlternating([handshakes.gateway, handshakes.nginx], rounds);
    const [gatewayHandshakes, nginxHandshakes] = handshakeRounds.merged as [WrkResult, WrkResult];
    await nginxTls.stop();
    nginxTls = undefined;

    const { chain: pacedChain, nginx: pacedNginx, upstream: pacedUpstream } = paced;
    const runs = [
      direct, proxied, luaFloor, noPlugins, chain, chainTls, wide, pacedChain, pacedNginx, pacedUpstream,
      gatewayHandshakes, nginxHandshakes,
    ];
    for (const run of runs) {
      if (run.non2xx > 0 || run.errors > 0) throw new Error(`${run.name}: ${run.non2xx} answers other than 2xx, ${run.errors} errors: not the path measured`);
    }

    const cpOnly = memoryOf([full.pid]);
    const nginxMemory = memoryOf(processTree(full.nginxPid));
    const memoryAfterLoad = { controlPlane: cpOnly, nginx: nginxMemory, total: memoryOf(gatewayProcesses(full.pid, full.nginxPid)) };
    progress(`memory after load: control plane ${cpOnly.rssMb} MB, nginx (master + workers) ${nginxMemory.rssMb} MB RSS`);

    await nginx.stop();
    nginx = undefined;
    await nginxLua.stop();
    nginxLua = undefined;

    const largeBodies = await benchLargeBodies(full.proxy, key, () => gatewayProcesses(full.pid, full.nginxPid));
    const breakdown = await measureBreakdown({
      admin: full.admin,
      url: `${full.proxy}${path}`,
      bearer: auth,
      scopedBearer: { authorization: `Bearer ${scopedKey}` },
      // the credential's key: what the edge plugin would have put in key-auth's header
      apikey: { apikey: digestApiKey(key) },
      planPluginId,
      nginxPid: full.nginxPid,
      durationSeconds,
      // the plugin-by-plugin rows are least-of-rounds figures: three rounds keep the run short
      rounds: Math.min(rounds, 3),
      chainCpu: chain.cpuMicrosPerRequest!,
      noPluginsCpu: noPlugins.cpuMicrosPerRequest!,
      nginxCpu: proxied.cpuMicrosPerRequest!,
      luaFloorCpu: luaFloor.cpuMicrosPerRequest!,
    });

    const luaProfile = options.profile
      ? await profileChain({ prefix: join(dir, 'full-prefix'), nginxPid: full.nginxPid, load: { ...scenarios.chain, durationSeconds: 10 } })
      : undefined;

    // Kong refuses a Content-Length over the limit before reading the body; a chunked body has no
    // size until it is read, so Kong (request buffering on) reads it to a temporary file first.
    const { alone } = largeBodies;
    const early = alone.status === 413 && alone.sentMb < 256;
    const sizedRefused = largeBodies.bodies.filter((b) => !b.chunked && b.status === 413).length;
    const chunkedRefused = largeBodies.bodies.filter((b) => b.chunked && b.status === 413).length;
    // Each ratio is taken within a round (its loads seconds apart), then the median of the rounds
    // is the figure and the only thing a target judges; the spread says how far a round strayed.
    const named = (results: WrkResult[]) => Object.fromEntries(order.map((name, i) => [name, results[i]!])) as Record<Scenario, WrkResult>;
    const byRound = (pick: (round: Record<Scenario, WrkResult>) => number) =>
      spread(alternating.rounds.map((results) => pick(named(results))));
    const cpu = (run: WrkResult) => run.cpuMicrosPerRequest!;
    const ratios: Record<string, Spread> = {
      chainOverBareCpu: chainRatio.ratio,
      chainOverBareCpuAlternating: byRound((r) => cpu(r.chain) / cpu(r.bare)),
      chainOverBare: byRound((r) => r.chain.rps / r.bare.rps),
      httpsOverHttp: byRound((r) => r.chainTls.rps / r.chain.rps),
      chainTlsCpu: byRound((r) => cpu(r.chainTls)),
      gatewayHandshakes: spread(handshakeRounds.rounds.map(([gateway]) => gateway!.rps)),
      nginxHandshakes: spread(handshakeRounds.rounds.map(([, nginx]) => nginx!.rps)),
      handshakesOverNginx: spread(handshakeRounds.rounds.map(([gateway, nginx]) => gateway!.rps / nginx!.rps)),
      chainOverDirect: byRound((r) => r.chain.rps / r.direct.rps),
      chainOverNginx: byRound((r) => r.chain.rps / r.nginx.rps),
      bareOverNginx: byRound((r) => r.bare.rps / r.nginx.rps),
      luaFloorOverNginx: byRound((r) => r.nginxLua.rps / r.nginx.rps),
      chainCpu: byRound((r) => cpu(r.chain)),
      bareCpu: byRound((r) => cpu(r.bare)),
      nginxCpu: byRound((r) => cpu(r.nginx)),
      pacedChainP99: spread(paced.rounds.map(([pacedChainRound]) => pacedChainRound!.p99)),
      pacedNginxP99: spread(paced.rounds.map(([, pacedNginxRound]) => pacedNginxRound!.p99)),
      pacedUpstreamP99: spread(paced.rounds.map(([, , pacedUpstreamRound]) => pacedUpstreamRound!.p99)),
      pacedChainOverNginxP99: spread(paced.rounds.map(([chainRound, nginxRound]) => chainRound!.p99 - nginxRound!.p99)),
      ratioChainCpu: chainRatio.chainCpu,
      ratioBareCpu: chainRatio.bareCpu,
    };
    const median = (name: string) => ratios[name]!.median;
    const shown = (name: string) => formatSpread(ratios[name]!);
    const cpuShown = (name: string) => `${median(name).toFixed(1)} (${ratios[name]!.min.toFixed(1)}-${ratios[name]!.max.toFixed(1)})`;
    // Kong's published key-auth + rate-limiting is 0.75 of no plugins: at most 1.25 times the
    // CPU of the route without plugins is ahead of it (issue 33)
    const figures: Figure[] = [
      {
        name: `full chain / route without plugins, CPU per request, median (${options.ratioRounds} rounds at once${chainRatio.pinned ? ', 1 CPU' : ''})`,
        value: shown('chainOverBareCpu'),
        target: '<= 1.25',
        ok: median('chainOverBareCpu') <= 1.25,
      },
      { name: '  CPU µs per request there: full chain; route without plugins', value: `${cpuShown('ratioChainCpu')}; ${cpuShown('ratioBareCpu')}` },
      ...kongPairFigures(pairRatio, options.ratioRounds),
      { name: `  the same in alternating rounds (${rounds}), 2 workers each, CPU per request`, value: shown('chainOverBareCpuAlternating') },
      { name: '  CPU µs per request: full chain; route without plugins; plain nginx', value: `${cpuShown('chainCpu')}; ${cpuShown('bareCpu')}; ${cpuShown('nginxCpu')}` },
      { name: 'full chain / route without plugins, req/s', value: shown('chainOverBare'), target: '>= 0.8', ok: median('chainOverBare') >= 0.8 },
      { name: 'full chain over https / over http (keep-alive), req/s', value: shown('httpsOverHttp'), target: '>= 0.8', ok: median('httpsOverHttp') >= 0.8 },
      { name: '  CPU µs per request: full chain over https; over http', value: `${cpuShown('chainTlsCpu')}; ${cpuShown('chainCpu')}` },
      {
        name: 'new TLS connections/s, 1 worker: gateway (no plugins); plain nginx',
        value: `${median('gatewayHandshakes').toFixed(0)}; ${median('nginxHandshakes').toFixed(0)}`,
      },
      { name: '  gateway / plain nginx, new TLS connections/s', value: shown('handshakesOverNginx') },
      { name: 'full chain / backend direct, req/s', value: shown('chainOverDirect'), target: '>= 0.5', ok: median('chainOverDirect') >= 0.5 },
      { name: `full chain / nginx plain proxy, ${workers} workers each, req/s`, value: shown('chainOverNginx'), target: '>= 0.65', ok: median('chainOverNginx') >= 0.65 },
      { name: '  route without plugins / nginx plain proxy, req/s', value: shown('bareOverNginx') },
      { name: '  nginx + empty *_by_lua hooks / nginx plain proxy, req/s', value: shown('luaFloorOverNginx') },
      {
        name: `full chain p99 at 64 connections paced to ~${pacedRate} req/s, ms (static upstream; plain nginx and it at once)`,
        value: shown('pacedChainP99'),
        target: '<= 8',
        ok: median('pacedChainP99') <= 8,
      },
      { name: '  the same pace, the same moments: p99 of plain nginx; of the upstream alone, ms', value: `${shown('pacedNginxP99')}; ${shown('pacedUpstreamP99')}` },
      { name: '  the chain\'s own tail: its p99 - plain nginx\'s in the same round, ms', value: shown('pacedChainOverNginxP99') },
      { name: '  the same pace: p50 of the full chain; plain nginx; the upstream alone, ms', value: `${pacedChain.p50}; ${pacedNginx.p50}; ${pacedUpstream.p50}` },
      { name: '  full chain p99 at 64 connections, saturating (closed loop), ms', value: `${wide.p99} (p50 ${wide.p50}, ${wide.rps} req/s)` },
      {
        name: 'RSS after load: nginx (master + workers) + control plane, MB',
        value: memoryAfterLoad.total.rssMb,
        target: '<= 150',
        ok: memoryAfterLoad.total.rssMb <= 150,
      },
      { name: '  of which control plane / nginx, MB (RSS; PSS total)', value: `${cpOnly.rssMb} / ${nginxMemory.rssMb} (${memoryAfterLoad.total.pssMb})` },
      { name: 'a 256 MB body with Content-Length, alone: MB sent when 413 came', value: `${alone.status}@${alone.sentMb}`, target: '413@<256', ok: early },
      { name: '4 concurrent x 256 MB: 2 with Content-Length answered 413', value: `${sizedRefused} of 2`, target: '2 of 2', ok: sizedRefused === 2 },
      { name: '  2 chunked answered 413 once read (as Kong: no size before)', value: `${chunkedRefused} of 2`, target: '2 of 2', ok: chunkedRefused === 2 },
      { name: '  each: MB sent when answered (CL, CL, chunked, chunked)', value: largeBodies.bodies.map((b) => `${b.status}@${b.sentMb}`).join(' ') },
      { name: '4 x 256 MB bodies: peak RSS, nginx + control plane, MB', value: largeBodies.peakRssMb, target: '< 300', ok: largeBodies.peakRssMb < 300 },
    ];
    return { workers, runs, figures, ratios, memoryAfterLoad, largeBodies, breakdown, luaProfile, chainRatio, pairRatio };
  } finally {
    await nginx?.stop();
    await nginxLua?.stop();
    await nginxTls?.stop();
    for (const proc of processes) proc.child.kill('SIGTERM');
    await Promise.all(processes.map((proc) => proc.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}
