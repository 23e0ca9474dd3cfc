import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { parse, stringify } from 'yaml';
import { findNginx } from '../../gateway/local/index.ts';
import { DATA_PLANE_DIR } from '../../gateway/local/index.ts';
import { generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';
import { REPO_ROOT, type SpawnedProcess } from '../helpers/process.ts';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.ts';
import { treeCpuMicros } from './processes.ts';
import { startSeededBackend } from './seed.ts';
import { freePort } from '../../packages/node-runtime/free-port.js';

/**
 * What the prometheus plugin costs the full chain (issue 24: at most 10% of its throughput):
 * gateway/kong.yml as it is and the same file without the prometheus plugin, each in a gateway
 * process of its own in front of one backend, loaded in alternating rounds (A B, B A, A B…) so
 * that a burst of someone else's work on this shared machine falls on both alike. Reports req/s,
 * latencies and the CPU time nginx spends per request, for each and side by side.
 *
 * The backend bounds the chain's throughput on this machine; with `--upstream static` a plain
 * nginx answering a fixed 1.5 KB JSON stands in for it, and the gateway is what limits req/s.
 *
 * `--control` runs the same comparison with the plugin off in both: the spread of its per-round
 * differences is this machine's noise, against which the plugin's difference is read.
 *
 *   node --import tsx test/bench/prometheus-cost.ts [--seconds 5] [--rounds 3] [--connections 10]
 *     [--upstream backend|static] [--control] [--json]
 */
const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const seconds = arg('--seconds', 5);
const rounds = arg('--rounds', 3);
const connections = arg('--connections', 10);
const control = process.argv.includes('--control');
const upstreamKind = process.argv.includes('--upstream') ? process.argv[process.argv.indexOf('--upstream') + 1] : 'backend';
if (upstreamKind !== 'backend' && upstreamKind !== 'static') throw new Error('--upstream is backend or static');

const log = (message: string) => process.stderr.write(`[prometheus-cost] ${message}\n`);

interface Gateway extends GatewayProcess {
  name: string;
}

interface Run {
  requests: number;
  seconds: number;
  cpuMicros: number;
  p50: number;
  p99: number;
  /** Connection errors and timeouts (the load generator's). */
  errors: number;
  /** Answers other than 2xx: another path than the chain's (a key refused, a limit hit). */
  non2xx: number;
}

async function startGateway(dir: string, name: string, configFile: string, backendUrl: string): Promise<Gateway> {
  return { name, ...(await startGatewayProcess(dir, name, configFile, backendUrl)) };
}

/** Debian's nginx answering every request with the same JSON: an upstream that costs ~nothing. */
async function startStaticUpstream(dir: string): Promise<{ url: string; proc: SpawnedProcess['child'] }> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const body = JSON.stringify({ data: Array.from({ length: 20 }, (_, i) => ({ id: i + 1, name: `pet-${i + 1}`, categoryId: 1, status: 'available' })) });
  writeFileSync(join(dir, 'nginx.conf'), `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/t; proxy_temp_path ${dir}/t; fastcgi_temp_path ${dir}/t; uwsgi_temp_path ${dir}/t; scgi_temp_path ${dir}/t;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:${port};
    default_type application/json;
    location / { return 200 '${body}'; }
  }
}
`);
  const proc = spawn('/usr/sbin/nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    const ok = await fetch(`${url}/pets`).then((r) => r.ok, () => false);
    if (ok) break;
    if (proc.exitCode !== null || attempt > 100) throw new Error('the static upstream (nginx) did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, proc };
}

/** test/bench/prometheus-log-path.lua inside nginx's init_by_lua: µs of library work per request. */
async function logPathMicros(dir: string): Promise<number> {
  const nginx = findNginx();
  mkdirSync(dir, { recursive: true });
  const lua = join(DATA_PLANE_DIR, 'lua');
  writeFileSync(join(dir, 'nginx.conf'), [
    ...nginx.loadModules,
    'pid nginx.pid;',
    'error_log stderr warn;',
    'events {}',
    'http {',
    `  lua_package_path '${lua}/?.lua;${lua}/?/init.lua;;';`,
    '  lua_shared_dict prometheus_metrics 16m;',
    `  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};`,
    `  init_by_lua_block { dofile("${join(REPO_ROOT, 'test/bench/prometheus-log-path.lua')}") }`,
    '}',
  ].join('\n'));
  const child = spawn(nginx.path, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  const micros = Number(stderr.trim().split('\n').at(-1));
  if (!Number.isFinite(micros)) throw new Error(`prometheus-log-path.lua: ${stderr}`);
  return micros;
}

async function post(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function load(gateway: Gateway, key: string, duration: number): Promise<Run> {
  const before = treeCpuMicros(gateway.nginxPid);
  const result = await autocannon({
    url: `${gateway.proxy}/v1/pets?limit=20`,
    connections,
    duration,
    headers: { authorization: `Bearer ${key}` },
    workers: 1,
  });
  const cpuMicros = treeCpuMicros(gateway.nginxPid) - before;
  if (result.errors + result.timeouts + result.non2xx > 0) {
    const codes = Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => `${code}: ${count}`).join(', ');
    log(`${gateway.name} prometheus: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx (${codes})`);
  }
  return {
    requests: result.requests.total,
    seconds: duration,
    cpuMicros,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'prometheus-cost-'));
const processes: SpawnedProcess[] = [];
let stopUpstream = () => {};
try {
  let backendUrl: string;
  let staticUpstream: SpawnedProcess['child'] | undefined;
  if (upstreamKind === 'static') {
    const upstream = await startStaticUpstream(join(dir, 'upstream'));
    staticUpstream = upstream.proc;
    backendUrl = upstream.url;
  } else {
    log('seeding 10000 pets');
    backendUrl = (await startSeededBackend(dir, processes)).url;
  }
  stopUpstream = () => staticUpstream?.kill('SIGTERM');

  const kongYml = join(REPO_ROOT, 'gateway/kong.yml');
  const config = parse(readFileSync(kongYml, 'utf8')) as { plugins: Array<{ name: string }> };
  if (!config.plugins.some((p) => p.name === 'prometheus')) throw new Error('gateway/kong.yml has no prometheus plugin to measure');
  config.plugins = config.plugins.filter((p) => p.name !== 'prometheus');
  const withoutFile = join(dir, 'kong-without-prometheus.yml');
  writeFileSync(withoutFile, stringify(config));

  log('starting both gateways');
  const gateways = [
    await startGateway(dir, 'with', control ? withoutFile : kongYml, backendUrl),
    await startGateway(dir, 'without', withoutFile, backendUrl),
  ];
  if (control) log('control run: the plugin is off in both gateways ("with" is a second "without")');
  processes.push(...gateways.map((g) => g.proc));
  // stored as the CLI stores keys (the edge plugin authenticates hashed credentials only)
  const key = generateApiKey();
  for (const gateway of gateways) {
    await post(`${gateway.admin}/consumers`, { username: 'bench' });
    await post(`${gateway.admin}/consumers/bench/key-auth`, storedCredential(key, []));
    await post(`${gateway.admin}/consumers/bench/plugins`, { name: 'rate-limiting', config: { minute: 1e9, day: 1e10 } });
  }

  for (const gateway of gateways) await load(gateway, key, 2); // JIT and connection pools warmed up
  const runs: Run[][] = [[], []];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      const run = await load(gateways[i]!, key, seconds);
      runs[i]!.push(run);
      log(`round ${round + 1}, ${gateways[i]!.name} prometheus: ${Math.round(run.requests / run.seconds)} req/s, ${Math.round(run.cpuMicros / run.requests)} µs CPU/request`);
    }
  }
  const summary = runs.map((results, i) => {
    const requests = results.reduce((sum, r) => sum + r.requests, 0);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    return {
      gateway: `full chain, ${gateways[i]!.name} prometheus`,
      rps: Math.round(requests / results.reduce((sum, r) => sum + r.seconds, 0)),
      p50: median(results.map((r) => r.p50)),
      p99: median(results.map((r) => r.p99)),
      cpuMicrosPerRequest: Math.round((results.reduce((sum, r) => sum + r.cpuMicros, 0) / requests) * 10) / 10,
      errors: results.reduce((sum, r) => sum + r.errors, 0),
      non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    };
  });
  const [withPlugin, withoutPlugin] = summary as [(typeof summary)[0], (typeof summary)[0]];
  const libraryMicros = await logPathMicros(join(dir, 'log-path'));
  const added = withPlugin.cpuMicrosPerRequest - withoutPlugin.cpuMicrosPerRequest;
  // each round's two runs are back to back: their difference shares that moment's load
  const perRequest = (run: Run) => run.cpuMicros / run.requests;
  const perRound = runs[0]!.map((run, i) => perRequest(run) - perRequest(runs[1]![i]!)).sort((a, b) => a - b);
  const medianAdded = Math.round(perRound[Math.floor(perRound.length / 2)]! * 10) / 10;
  const figures = {
    rpsRatio: Math.round((withPlugin.rps / withoutPlugin.rps) * 1000) / 1000,
    throughputCost: Math.round((1 - withPlugin.rps / withoutPlugin.rps) * 1000) / 10,
    cpuMicrosAdded: Math.round(added * 10) / 10,
    cpuShare: Math.round((added / withPlugin.cpuMicrosPerRequest) * 1000) / 10,
    medianRoundCpuMicrosAdded: medianAdded,
    libraryMicros,
  };
  console.log('');
  console.log(`upstream: ${upstreamKind}, ${connections} connections, ${rounds} rounds of ${seconds} s each${control ? ', CONTROL (plugin off in both)' : ''}`);
  const cols = (...cells: Array<string | number>) => cells.map((c, i) => (i === 0 ? String(c).padEnd(36) : String(c).padStart(i === 4 ? 17 : 7))).join(' ');
  console.log(cols('scenario', 'req/s', 'p50 ms', 'p99 ms', 'nginx CPU µs/req', 'errors', 'non-2xx'));
  for (const s of summary) console.log(cols(s.gateway, s.rps, s.p50, s.p99, s.cpuMicrosPerRequest, s.errors, s.non2xx));
  console.log('');
  console.log(`with / without prometheus, req/s: ${figures.rpsRatio} (the plugin costs ${figures.throughputCost}% of the chain's throughput; target <= 10%)`);
  console.log(`nginx CPU the plugin adds: ${figures.cpuMicrosAdded} µs per request, ${figures.cpuShare}% of the chain's`);
  console.log(`  per round (with minus without, back to back): median ${medianAdded} µs, from ${perRound.map((d) => d.toFixed(1)).join(', ')}`);
  console.log(`in process, the metrics library's work per request (prometheus-log-path.lua): ${libraryMicros} µs`);
  if (process.argv.includes('--json')) {
    const settings = { control, upstream: upstreamKind, seconds, rounds, connections };
    console.log(JSON.stringify({ date: new Date().toISOString(), ...settings, summary, figures }));
  }
  // anything but 200 (a key refused, a limit hit) measures another path than the chain's
  if (summary.some((s) => s.non2xx > 0)) {
    log('some requests were not answered 200: these figures are not the full chain\'s');
    process.exitCode = 1;
  }
} finally {
  for (const name of ['with', 'without']) {
    try {
      const lines = readFileSync(join(dir, `${name}-prefix`, 'logs', 'error.log'), 'utf8').split('\n').filter((l) => /\[(error|crit|alert|emerg)\]|err:/.test(l));
      if (lines.length > 0) log(`${name} prometheus, the gateway's errors:\n${lines.slice(0, 10).join('\n')}`);
    } catch {
      // no log
    }
  }
  stopUpstream();
  for (const proc of processes) proc.child.kill('SIGTERM');
  await Promise.all(processes.map((proc) => proc.exited));
  rmSync(dir, { recursive: true, force: true });
}
