import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeCursor } from '../../backend/src/http/pagination.ts';
import { startBackend } from '../../backend/src/index.ts';
import { startBareJsonServer } from './bare-server.ts';
import { load, progress, ratio, type LoadResult } from './load.ts';
import { seedPets } from './seed.ts';

export interface BackendBenchResult {
  runs: LoadResult[];
  ratios: Record<string, { value: number; target: string; ok: boolean }>;
}

async function withBackend<T>(pets: number, run: (url: string) => Promise<T>, options: { cachePetPages?: boolean } = {}): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
  const backend = await startBackend({ host: '127.0.0.1', port: 0, dataDir }, options);
  try {
    progress(`seeding ${pets} pets`);
    await seedPets(backend.db, pets);
    return await run(backend.url);
  } finally {
    await backend.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Pages spread over the whole table, so depth cannot hide behind a warm first page. */
function pagesAcross(pets: number): string[] {
  return Array.from({ length: 50 }, (_, i) => {
    const after = Math.floor((pets / 50) * i);
    return after === 0 ? '/pets?limit=20' : `/pets?limit=20&cursor=${encodeCursor(after)}`;
  });
}

function medianByRps(runs: LoadResult[]): LoadResult {
  return [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
}

export async function benchBackend(options: { durationSeconds: number; deepPets: number }): Promise<BackendBenchResult> {
  const { durationSeconds, deepPets } = options;
  const runs: LoadResult[] = [];

  const throughput = await withBackend(10_000, async (url) => {
    const sample = await (await fetch(`${url}/pets?limit=20`)).json();
    const bare = await startBareJsonServer(sample);
    try {
      const bareRun = await load({ name: 'bare node:http JSON', url: `${bare.url}/pets?limit=20`, durationSeconds });
      const backendRun = await load({ name: 'backend GET /pets?limit=20 (10k pets)', url: `${url}/pets?limit=20`, durationSeconds });
      return { bareRun, backendRun };
    } finally {
      bare.server.close();
    }
  });
  runs.push(throughput.bareRun, throughput.backendRun);

  // Depth: the page cache is off so every request runs its keyset query against the table. Both
  // tables are served at once and measured in alternation, the median of three rounds each: a
  // single-connection run on a shared machine moves by ~20% from one run to the next.
  const uncached = { cachePetPages: false };
  const roundSeconds = Math.max(1, durationSeconds / 2);
  const { small, large } = await withBackend(1_000, (smallUrl) =>
    withBackend(deepPets, async (largeUrl) => {
      const smallRuns: LoadResult[] = [];
      const largeRuns: LoadResult[] = [];
      for (let round = 0; round < 3; round++) {
        smallRuns.push(await load({ name: 'uncached pages, 1k pets (median of 3)', url: smallUrl, paths: pagesAcross(1_000), durationSeconds: roundSeconds, connections: 1 }));
        largeRuns.push(await load({ name: `uncached pages, ${deepPets.toLocaleString('en')} pets (median of 3)`, url: largeUrl, paths: pagesAcross(deepPets), durationSeconds: roundSeconds, connections: 1 }));
      }
      return { small: medianByRps(smallRuns), large: medianByRps(largeRuns) };
    }, uncached),
    uncached,
  );
  runs.push(small, large);

  const throughputRatio = ratio(throughput.backendRun.rps, throughput.bareRun.rps);
  // autocannon reports whole milliseconds, too coarse for sub-millisecond p50s; at one connection
  // the mean latency is exactly 1000 / rps ms, so the ratio is taken from that.
  const depthRatio = ratio(1000 / large.rps, 1000 / small.rps);
  return {
    runs,
    ratios: {
      'backend / bare node:http RPS': { value: throughputRatio, target: '>= 0.5', ok: throughputRatio >= 0.5 },
      [`latency at ${deepPets.toLocaleString('en')} / at 1k pets`]: { value: depthRatio, target: '<= 1.2', ok: depthRatio <= 1.2 },
    },
  };
}
