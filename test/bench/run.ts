import { benchBackend } from './backend-bench.ts';
import { benchChainRatio, benchChainRatioByPlugin } from './chain-ratio.ts';
import { runExtras } from './extras.ts';
import { benchGateway, type Figure, type GatewayBenchResult } from './gateway-bench.ts';
import type { LoadResult } from './load.ts';
import { benchPortal } from './portal-bench.ts';

/**
 * `npm run bench [-- --quick] [--json] [--only backend|gateway|ratio|ratio-plugins|extras|portal] [--profile]`
 *
 * Every figure of the run side by side, then a table of them against their targets. `backend`:
 * the backend's own figures (autocannon, in process). `gateway`: issue 20's gateway figures and
 * the chain's cost plugin by plugin (test/bench/gateway-bench.ts). `ratio`: only the gateway's
 * primary figure, the full chain's CPU per request over the route without plugins, and Kong's published
 * pair (key-auth + rate-limiting) measured the same way (test/bench/chain-ratio.ts, ~3 minutes).
 * `ratio-plugins`: the same for the full chain without each of our pieces in turn (~6 minutes). `extras`: the measurements
 * other issues wrote as scripts of their own (test/bench/extras.ts). --quick: shorter and single
 * rounds, for a look; --json: the same figures as one JSON object on the last line; --profile:
 * LuaJIT's profiler on the node's workers under the full chain (test/bench/lua-profile.ts).
 */
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyAt = args.indexOf('--only');
const only = onlyAt === -1 ? undefined : args[onlyAt + 1];
if (only !== undefined && !['backend', 'gateway', 'ratio', 'ratio-plugins', 'extras', 'portal'].includes(only)) {
  console.error('--only takes backend, gateway, ratio, ratio-plugins, extras or portal');
  process.exit(2);
}
// five short rounds: the gateway's ratios are medians of them (issue 33)
const durationSeconds = quick ? 2 : 4;
const rounds = quick ? 1 : 5;
// the primary figure's rounds: both loads at once, 2 s each (test/bench/chain-ratio.ts)
const ratioRounds = quick ? 3 : 12;

const runs: Array<LoadResult & { loaderCpuMicrosPerRequest?: number }> = [];
const figures: Figure[] = [];
let gateway: GatewayBenchResult | undefined;

if (!only || only === 'backend') {
  const backend = await benchBackend({ durationSeconds, deepPets: quick ? 100_000 : 1_000_000 });
  runs.push(...backend.runs);
  for (const [name, { value, target, ok }] of Object.entries(backend.ratios)) figures.push({ name, value, target, ok });
}
if (!only || only === 'gateway') {
  gateway = await benchGateway({ durationSeconds, rounds, ratioRounds, profile: args.includes('--profile') });
  runs.push(...gateway.runs);
  figures.push(...gateway.figures);
  // Differences of two full-chain measurements: their noise is of the size of what they measure
  // (either sign), so they are shown without a target; the targets are judged by the extras'
  // measurements of the same things (prometheus-cost.ts, scope-check.ts).
  figures.push({
    name: '  prometheus plugin: share of the chain\'s throughput (breakdown rounds; target judged in the extras), %',
    value: gateway.breakdown.prometheusThroughputCostPercent,
  });
  figures.push({
    name: '  chain with a scoped key - without scopes, CPU µs per request (breakdown rounds; target judged in the extras)',
    value: gateway.breakdown.scopedKeyMicros,
  });
}
if (only === 'ratio') {
  figures.push(...(await benchChainRatio(ratioRounds)));
}
if (only === 'ratio-plugins') {
  figures.push(...(await benchChainRatioByPlugin(ratioRounds)));
}
if (!only || only === 'portal') {
  // issue 32: the portal's pages under 20 signed-in sessions beside the API, its RSS (test/bench/portal-bench.ts)
  const portal = await benchPortal({ durationSeconds, rounds: quick ? 1 : 3 });
  runs.push(...portal.runs);
  figures.push(...portal.figures);
}
if (!only || only === 'extras') {
  figures.push(...(await runExtras({ quick })));
}

const pad = (value: string | number | undefined, width: number) => String(value ?? '').padStart(width);
console.log('');
console.log(`${'scenario'.padEnd(52)} ${pad('req/s', 7)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('errors', 7)} ${pad('server CPU µs/req', 18)} ${pad('wrk µs/req', 11)}`);
for (const run of runs) {
  const failed = run.errors + run.non2xx;
  console.log(`${run.name.padEnd(52)} ${pad(run.rps, 7)} ${pad(run.p50, 7)} ${pad(run.p99, 7)} ${pad(failed, 7)} ${pad(run.cpuMicrosPerRequest, 18)} ${pad(run.loaderCpuMicrosPerRequest, 11)}`);
}
if (gateway) {
  console.log('');
  console.log(`${'where the full chain\'s CPU goes (node, µs per request)'.padEnd(64)} ${pad('µs', 6)}`);
  for (const row of gateway.breakdown.rows) console.log(`${row.piece.padEnd(64)} ${pad(row.micros, 6)}${row.note ? `  (${row.note})` : ''}`);
}
if (gateway?.luaProfile) {
  console.log('');
  console.log('LuaJIT profile of the node\'s workers under the full chain (jit.p: VM state, then function < caller)');
  console.log(gateway.luaProfile);
}
console.log('');
console.log(`${'figure'.padEnd(72)} ${pad('value', 26)} ${pad('target', 9)}  met`);
for (const figure of figures) {
  const met = figure.target === undefined ? '' : figure.ok ? 'yes' : 'NO';
  console.log(`${figure.name.padEnd(72)} ${pad(figure.value, 26)} ${pad(figure.target, 9)}  ${met}`);
}
if (args.includes('--json')) {
  console.log(JSON.stringify({ date: new Date().toISOString(), node: process.version, quick, runs, figures, gateway }));
}
