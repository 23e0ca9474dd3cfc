import { readdirSync, readFileSync } from 'node:fs';

/** A process's children (an nginx master's workers), from /proc/<pid>/task/<tid>/children. */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text) children.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return children;
}

/** The process and its children. */
export function processTree(pid: number): number[] {
  return [pid, ...childrenOf(pid)];
}

/**
 * CPU time of one process (all its threads), µs; 0 once it is gone. The scheduler's own count
 * (/proc/<pid>/task/<tid>/schedstat, ns on a CPU) where the kernel has it: /proc/<pid>/stat's
 * utime + stime are sampled in 10 ms clock ticks, coarse against a round's few hundred ms.
 */
function cpuMicros(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1000;
  } catch {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10_000;
    } catch {
      return 0;
    }
  }
}

/** CPU time of a process and its children, µs. */
export function treeCpuMicros(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + cpuMicros(p), 0);
}

export interface Memory {
  /**
   * Resident set sizes added up, MB: pages shared between the processes (nginx's shared dicts,
   * what workers share with their master) count once per process.
   */
  rssMb: number;
  /** Proportional set sizes added up, MB: each shared page split between the processes mapping it. */
  pssMb: number;
}

function kib(text: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
}

/** Memory of exactly these processes; PSS (slower to read) unless `rssOnly`. */
export function memoryOf(pids: number[], rssOnly = false): Memory {
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    try {
      rss += kib(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');
      if (!rssOnly) pss += kib(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
    } catch {
      // gone
    }
  }
  return { rssMb: Math.round(rss / 1024), pssMb: Math.round(pss / 1024) };
}

/** A gateway's processes: its control plane and its node's nginx (master and workers). */
export function gatewayProcesses(controlPlanePid: number, nginxPid: number): number[] {
  return [controlPlanePid, ...processTree(nginxPid)];
}

/** Samples the RSS of `pids()` every `intervalMs` until stopped: the highest sum seen, MB. */
export function peakRss(pids: () => number[], intervalMs = 20): { stop(): number } {
  let peak = memoryOf(pids(), true).rssMb;
  const timer = setInterval(() => (peak = Math.max(peak, memoryOf(pids(), true).rssMb)), intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, memoryOf(pids(), true).rssMb);
    },
  };
}

/** Polls `ready` every 50 ms until it holds; an error after `timeoutMs`. */
export async function waitFor(what: string, ready: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** HUP: nginx re-reads its conf and replaces its workers (a node's snapshot stays in the shared dict). */
export async function reloadNginx(nginxPid: number): Promise<void> {
  const old = new Set(childrenOf(nginxPid));
  process.kill(nginxPid, 'SIGHUP');
  await waitFor('new nginx workers', () => {
    const now = childrenOf(nginxPid);
    return now.length > 0 && now.every((pid) => !old.has(pid));
  });
}
