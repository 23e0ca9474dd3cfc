import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Requests completed in the run. */
  requests: number;
  /** CPU time (user + system) the measured process spent per request, when one was named. */
  cpuMicrosPerRequest?: number;
}

export interface LoadOptions {
  name: string;
  url: string;
  headers?: Record<string, string>;
  connections?: number;
  durationSeconds?: number;
  /** Paths to rotate through (autocannon requests), relative to url's origin. */
  paths?: string[];
  /** A server process (not this one) whose CPU time per request to report. */
  cpuOfPid?: number;
}

/** utime + stime of a process in microseconds (Linux /proc; clock ticks are 1/100 s). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** One autocannon run; latencies in milliseconds. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const { name, url, headers = {}, connections = 10, durationSeconds = 5, paths, cpuOfPid } = options;
  progress(`${name}: ${connections} connections for ${durationSeconds}s`);
  const cpuBefore = cpuOfPid === undefined ? 0 : cpuMicros(cpuOfPid);
  const result = await autocannon({
    url,
    connections,
    duration: durationSeconds,
    headers,
    requests: paths?.map((path) => ({ method: 'GET', path })),
    workers: 1,
  });
  const outcome: LoadResult = {
    name,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    requests: result.requests.total,
  };
  if (cpuOfPid !== undefined && result.requests.total > 0) {
    outcome.cpuMicrosPerRequest = Math.round((cpuMicros(cpuOfPid) - cpuBefore) / result.requests.total);
  }
  const cpu = outcome.cpuMicrosPerRequest === undefined ? '' : `, ${outcome.cpuMicrosPerRequest} µs CPU/request`;
  progress(`${name}: ${outcome.rps} req/s, p50 ${outcome.p50} ms, p99 ${outcome.p99} ms${cpu}`);
  return outcome;
}

export function ratio(a: number, b: number): number {
  return b === 0 ? 0 : Math.round((a / b) * 100) / 100;
}

/** The median of some values and their spread (least and greatest), as a bench reports a figure measured round by round. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median = sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  const round2 = (n: number) => Math.round(n * 100) / 100;
  return { median: round2(median), min: round2(sorted[0]!), max: round2(sorted.at(-1)!) };
}

/** "1.42 (1.38-1.47)": the median, then the least and greatest of the rounds. */
export function formatSpread({ median, min, max }: Spread): string {
  return `${median.toFixed(2)} (${min.toFixed(2)}-${max.toFixed(2)})`;
}
