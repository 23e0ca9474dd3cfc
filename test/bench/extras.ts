import { spawnNode } from '../helpers/process.ts';
import { measureClusterScale } from './cluster-scale.ts';
import { measureEdgeHash } from './edge-hash.ts';
import type { Figure } from './gateway-bench.ts';
import { progress } from './load.ts';
import { measureScopeCheck } from './scope-check.ts';

/**
 * Measurements other issues wrote as scripts of their own (each also runs alone: see its header),
 * run after the gateway figures with their own servers, and reported as rows of the same table.
 * A new one goes here: a name, its issue, and a function returning its rows. One that fails (a
 * missing redis-server…) gives a row saying why instead of stopping the bench.
 */
interface Extra {
  name: string;
  issue: number;
  run(options: { quick: boolean }): Promise<Figure[]>;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** A script that prints its figures as one JSON object on its last line with --json. */
async function jsonScript(entry: string, args: string[]): Promise<any> {
  const child = spawnNode(['--import', 'tsx', entry, '--json', ...args], {});
  const exit = await child.exited;
  const last = child.output().trim().split('\n').filter((line) => line.startsWith('{')).at(-1);
  if (!last) throw new Error(`${entry} exited ${exit.code ?? exit.signal} without figures:\n${child.output().slice(-2000)}`);
  return JSON.parse(last);
}

const EXTRAS: Extra[] = [
  {
    name: 'edge plugin: key checksum + SHA-256, in nginx (test/bench/edge-hash.ts)',
    issue: 22,
    async run({ quick }) {
      const figures = await measureEdgeHash(quick ? 1 : 2);
      return [
        { name: 'edge plugin: hash + checksum added per request, µs', value: round1(figures.added), target: '<= 2', ok: figures.added <= 2 },
        { name: '  checksum / SHA-256 + hex / a refused typo, µs', value: `${round1(figures.checksum)} / ${round1(figures.hash)} / ${round1(figures.refusal)}` },
      ];
    },
  },
  {
    name: 'animal-store-access: a key\'s scope check, in nginx (test/bench/scope-check.ts)',
    issue: 31,
    async run({ quick }) {
      const figures = await measureScopeCheck(quick ? 1 : 2);
      return [
        { name: 'scope check: added per request with a scoped key, µs', value: round1(figures.scoped), target: '<= 1', ok: figures.scoped <= 1 },
        { name: '  a scoped key refused / a key without scopes, µs', value: `${round1(figures.refused)} / ${round1(figures.unscoped)}` },
      ];
    },
  },
  {
    name: 'prometheus plugin: the chain with and without it (test/bench/prometheus-cost.ts)',
    issue: 24,
    async run({ quick }) {
      const { figures } = await jsonScript('test/bench/prometheus-cost.ts', quick ? ['--seconds', '2', '--rounds', '1'] : []);
      return [
        {
          name: 'prometheus plugin: share of the chain\'s throughput, %',
          value: figures.throughputCost,
          target: '<= 10',
          ok: figures.throughputCost <= 10,
        },
        { name: '  nginx CPU it adds per request, µs (its metrics library alone)', value: `${figures.cpuMicrosAdded} (${figures.libraryMicros})` },
      ];
    },
  },
  {
    name: 'scale-out: two nodes behind the balancer, redis policy (test/bench/cluster-scale.ts)',
    issue: 21,
    async run({ quick }) {
      const figures = await measureClusterScale(quick ? { seconds: 2, rounds: 1 } : {});
      return [
        { name: 'two nodes behind the balancer / one node, req/s (redis policy)', value: figures.twoNodesOverOne },
        { name: 'redis policy against local: CPU µs per request (node + Redis), p50 ms', value: `+${figures.redisCpuPerRequest}, +${figures.redisLatencyMs}` },
      ];
    },
  },
];

export async function runExtras(options: { quick: boolean }): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const extra of EXTRAS) {
    progress(`${extra.name} (issue ${extra.issue})`);
    try {
      figures.push(...(await extra.run(options)));
    } catch (error) {
      figures.push({ name: `${extra.name}: not measured`, value: (error as Error).message.split('\n')[0]!, ok: false, target: 'measured' });
    }
  }
  return figures;
}
