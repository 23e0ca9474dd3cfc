import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { progress, type LoadResult } from './load.ts';
import { treeCpuMicros } from './processes.ts';

/**
 * The gateway figures' load generator: Debian's wrk, one thread. wrk is C on epoll and spends
 * ~2-4 µs of CPU per request (its own share is measured and reported); autocannon in a worker
 * thread spends ~15-20 µs, most of one of this machine's two cores, which it then takes from the
 * servers it measures, and most from whichever is fastest.
 */
const WRK = '/usr/bin/wrk';

export interface WrkOptions {
  name: string;
  url: string;
  headers?: Record<string, string>;
  connections?: number;
  durationSeconds: number;
  /** Servers whose CPU time per request to report: each pid with its children (an nginx master's workers). */
  cpuOf?: number[];
  /** The CPUs wrk may run on (taskset's list, "0"); any when absent. */
  cpus?: string;
  /**
   * Paced: about this many requests per second over all connections (each connection waits
   * connections / rate between an answer and its next request), not as many as the server takes.
   */
  ratePerSecond?: number;
}

/**
 * A LoadResult: latencies in milliseconds; errors are connection errors and timeouts, non2xx the
 * answers other than 2xx and 3xx (another path than the one meant: a key refused, a limit hit);
 * cpuMicrosPerRequest is the `cpuOf` processes' CPU time per request.
 */
export interface WrkResult extends LoadResult {
  seconds: number;
  /** wrk's own CPU time per request, µs. */
  loaderCpuMicrosPerRequest: number;
}

// wrk reports through its Lua `done` hook: one JSON line, latencies in µs.
const REPORT_SCRIPT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n{"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

// wrk's `delay` hook: milliseconds a connection waits before its next request, drawn from an
// exponential distribution of that mean, so that the connections' requests arrive spread out
// (as independent clients' would) rather than in step, 64 at a time
const PACED_SCRIPT = (meanDelayMs: number) => `${REPORT_SCRIPT}
math.randomseed(os.time())
local log, random = math.log, math.random
delay = function() return -${meanDelayMs} * log(1 - random()) end
`;

let scriptDir: string | undefined;
const written = new Set<string>();
// Written once per run: loads started at once (wrkAtOnce, the chain ratio) share a script, and a
// rewrite truncates the file another wrk may be reading (which then runs without its `done` hook).
function reportScript(delayMs?: number): string {
  scriptDir ??= mkdtempSync(join(tmpdir(), 'animal-store-wrk-'));
  const path = join(scriptDir, delayMs === undefined ? 'report.lua' : `paced-${delayMs}.lua`);
  if (!written.has(path)) {
    writeFileSync(path, delayMs === undefined ? REPORT_SCRIPT : PACED_SCRIPT(delayMs));
    written.add(path);
  }
  return path;
}

interface WrkReport {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50_us: number;
  p99_us: number;
}

/** Runs wrk under bash, whose `times` then gives wrk's CPU time (children's user and system). */
function runWrk(args: string[], cpus: string | undefined): Promise<{ report: WrkReport; cpuMicros: number }> {
  const seconds = (value: string) => {
    const [, minutes, secs] = /^(\d+)m([\d.]+)s$/.exec(value)!;
    return Number(minutes) * 60 + Number(secs);
  };
  return new Promise((resolve, reject) => {
    const shell = ['bash', '-c', `"${WRK}" "$@" || exit $?; times`, 'wrk', ...args];
    const command = cpus === undefined ? shell : ['taskset', '-c', cpus, ...shell];
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    // 'close', not 'exit': the exit can come before the last of stdout (the `times` line) is read
    child.once('close', (code) => {
      const report = /^\{"requests".*\}$/m.exec(stdout)?.[0];
      // `times`: the shell's user and system, then its children's
      const children = stdout.trim().split('\n').at(-1)!.trim().split(/\s+/);
      if (code !== 0 || !report || children.length !== 2) {
        reject(new Error(`wrk failed (exit ${code}): ${stderr}${stdout}`));
        return;
      }
      resolve({ report: JSON.parse(report) as WrkReport, cpuMicros: (seconds(children[0]!) + seconds(children[1]!)) * 1e6 });
    });
  });
}

export async function wrk(options: WrkOptions): Promise<WrkResult> {
  const { name, url, headers = {}, connections = 32, durationSeconds, cpuOf = [], cpus, ratePerSecond } = options;
  const paced = ratePerSecond === undefined ? '' : `, paced to ~${ratePerSecond} req/s`;
  progress(`${name}: ${connections} connections for ${durationSeconds}s${paced}`);
  const delayMs = ratePerSecond === undefined ? undefined : Math.round((connections * 1000) / ratePerSecond);
  const args = ['-t1', `-c${connections}`, `-d${durationSeconds}s`, '--timeout', '10s', '-s', reportScript(delayMs)];
  for (const [header, value] of Object.entries(headers)) args.push('-H', `${header}: ${value}`);
  args.push(url);
  const cpuBefore = cpuOf.map(treeCpuMicros);
  const { report, cpuMicros } = await runWrk(args, cpus);
  const cpuAfter = cpuOf.map(treeCpuMicros);
  const seconds = report.duration_us / 1e6;
  const result: WrkResult = {
    name,
    rps: Math.round(report.requests / seconds),
    p50: Math.round(report.p50_us / 10) / 100,
    p99: Math.round(report.p99_us / 10) / 100,
    errors: report.connect + report.read + report.write + report.timeout,
    non2xx: report.status,
    requests: report.requests,
    seconds,
    loaderCpuMicrosPerRequest: Math.round((cpuMicros / Math.max(report.requests, 1)) * 10) / 10,
  };
  if (cpuOf.length > 0 && report.requests > 0) {
    const spent = cpuAfter.reduce((sum, after, i) => sum + after - cpuBefore[i]!, 0);
    result.cpuMicrosPerRequest = Math.round((spent / report.requests) * 10) / 10;
  }
  const cpu = result.cpuMicrosPerRequest === undefined ? '' : `, ${result.cpuMicrosPerRequest} µs CPU/request`;
  progress(`${name}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms${cpu}${result.non2xx ? `, ${result.non2xx} non-2xx` : ''}`);
  return result;
}

/** The scenarios' results, merged over the rounds and round by round (`rounds[round][scenario]`). */
interface AlternatingResult {
  merged: WrkResult[];
  rounds: WrkResult[][];
}

/**
 * The same loads in alternating rounds (A B C, C B A, A B C, ...): on a shared machine a burst of
 * someone else's work then falls on every scenario alike, and a ratio of two scenarios taken
 * within one round compares loads run seconds apart. Per scenario, req/s and CPU per request over
 * all its rounds; latencies of its median round.
 */
export async function wrkAlternating(scenarios: WrkOptions[], rounds: number): Promise<AlternatingResult> {
  const perScenario: WrkResult[][] = scenarios.map(() => []);
  const perRound: WrkResult[][] = [];
  for (let round = 0; round < rounds; round++) {
    const order = scenarios.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    const thisRound: WrkResult[] = [];
    for (const i of order) {
      const scenario = scenarios[i]!;
      thisRound[i] = await wrk({ ...scenario, name: `${scenario.name} (round ${round + 1} of ${rounds})` });
      perScenario[i]!.push(thisRound[i]);
    }
    perRound.push(thisRound);
  }
  return { merged: perScenario.map((results, i) => mergeRounds(scenarios[i]!.name, results)), rounds: perRound };
}

/**
 * The same loads at once, in rounds: a stall of the machine (another process's burst, both cores
 * taken) then falls on every scenario in the same milliseconds, so that what one scenario's
 * latency has beyond another's within a round is its own. Merged as wrkAlternating's.
 */
export async function wrkAtOnce(scenarios: WrkOptions[], rounds: number): Promise<AlternatingResult> {
  const perRound: WrkResult[][] = [];
  for (let round = 0; round < rounds; round++) {
    perRound.push(await Promise.all(scenarios.map((scenario) => wrk({ ...scenario, name: `${scenario.name} (round ${round + 1} of ${rounds})` }))));
  }
  return { merged: scenarios.map((scenario, i) => mergeRounds(scenario.name, perRound.map((results) => results[i]!))), rounds: perRound };
}

function mergeRounds(name: string, results: WrkResult[]): WrkResult {
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
  const weighted = (pick: (r: WrkResult) => number | undefined) =>
    Math.round((results.reduce((sum, r) => sum + pick(r)! * r.requests, 0) / Math.max(requests, 1)) * 10) / 10;
  const merged: WrkResult = {
    name,
    rps: Math.round(requests / seconds),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    requests,
    seconds,
    loaderCpuMicrosPerRequest: weighted((r) => r.loaderCpuMicrosPerRequest),
  };
  if (results.every((r) => r.cpuMicrosPerRequest !== undefined)) merged.cpuMicrosPerRequest = weighted((r) => r.cpuMicrosPerRequest);
  return merged;
}
