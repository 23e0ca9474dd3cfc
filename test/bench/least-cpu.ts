/**
 * CPU µs per call of `oneRequest` over `seconds`, after a warm-up of 20,000 calls: the least of
 * five rounds, since on a shared machine other processes only ever add to a round (cache and
 * core contention). `oneRequest` gets a running request number.
 */
export function leastCpuMicrosPerRequest(seconds: number, oneRequest: (n: number) => void): number {
  let n = 0;
  for (; n < 20_000; n++) oneRequest(n);
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const cpuBefore = process.cpuUsage();
    const deadline = performance.now() + (seconds * 1000) / 5;
    let count = 0;
    while (performance.now() < deadline) {
      for (let i = 0; i < 1000; i++) oneRequest(n++);
      count += 1000;
    }
    const cpu = process.cpuUsage(cpuBefore);
    best = Math.min(best, (cpu.user + cpu.system) / count);
  }
  return best;
}
