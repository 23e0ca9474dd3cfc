import { benchBackend } from './backend-bench.ts';
import { benchGateway } from './gateway-bench.ts';
import type { LoadResult } from './load.ts';

/**
 * `npm run bench [-- --json] [--quick] [--only backend|gateway] [--profile]`
 * Runs every scenario side by side in one process and prints a table; with --json the same
 * figures follow as one JSON object on the last line.
 */
const args = new Set(process.argv.slice(2));
const quick = args.has('--quick');
const durationSeconds = quick ? 2 : 5;

const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const runs: LoadResult[] = [];
const ratios: Record<string, { value: number; target: string; ok: boolean }> = {};
if (!only || only === 'backend') {
  const backend = await benchBackend({ durationSeconds, deepPets: quick ? 100_000 : 1_000_000 });
  runs.push(...backend.runs);
  Object.assign(ratios, backend.ratios);
}
if (!only || only === 'gateway') {
  const gateway = await benchGateway({ durationSeconds });
  runs.push(...gateway.runs);
  Object.assign(ratios, gateway.ratios);
}

const pad = (value: string | number, width: number) => String(value).padStart(width);
console.log('');
// CPU µs/req: what the server process under test spent per request (separate processes only).
console.log(`${'scenario'.padEnd(50)} ${pad('req/s', 8)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('errors', 7)} ${pad('CPU µs/req', 11)}`);
for (const run of runs) {
  console.log(`${run.name.padEnd(50)} ${pad(run.rps, 8)} ${pad(run.p50, 7)} ${pad(run.p99, 7)} ${pad(run.errors + run.non2xx, 7)} ${pad(run.cpuMicrosPerRequest ?? '', 11)}`);
}
console.log('');
console.log(`${'ratio'.padEnd(50)} ${pad('value', 8)} ${pad('target', 8)}  ok`);
for (const [name, { value, target, ok }] of Object.entries(ratios)) {
  console.log(`${name.padEnd(50)} ${pad(value, 8)} ${pad(target, 8)}  ${target === '-' ? '' : ok ? 'yes' : 'NO'}`);
}
if (args.has('--json')) {
  console.log(JSON.stringify({ date: new Date().toISOString(), node: process.version, runs, ratios }));
}
