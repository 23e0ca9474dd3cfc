// The charts' source without Prometheus (`npm start`): the portal samples the data planes' Status
// API (/metrics) itself and keeps, per consumer, what each sample added, in hourly buckets in its
// own memory for 8 days. What it cannot show: anything before its first sample, or while it was
// stopped (docs/portal.md, "Usage charts").
import type { Clock } from './clock.ts';
import {
  CHART_RANGES,
  chartBuckets,
  COUNT_COLUMNS,
  emptyCounts,
  scrapeNodes,
  type RequestSeries,
  type UsageCounts,
} from '../../packages/usage/index.ts';

const HOUR_MS = 3_600_000;
const KEEP_MS = 8 * 86_400_000;
const CLASSES = COUNT_COLUMNS.filter((column) => column !== 'requests');

export class UsageSamples {
  /** Per node, per consumer: the node's totals at the last sample. A node without an entry has not been sampled yet. */
  private readonly last = new Map<string, Map<string, UsageCounts>>();
  /** Per consumer, per hour's start (unix ms): the requests the samples in that hour added. */
  private readonly hours = new Map<string, Map<number, UsageCounts>>();
  private sampling: Promise<void> | undefined;
  private sampledAt = -Infinity;
  /** When the first sample of every node was taken: nothing before it is known. */
  firstSampleAt: number | undefined;
  lastError: string | undefined;

  constructor(
    private readonly statusUrls: URL[],
    private readonly clock: Clock,
    /** The consumers kept: the portal's own (its accounts'). */
    private readonly keep: (consumer: string) => boolean,
  ) {}

  /** One sample of every node; concurrent callers share the one under way. */
  sample(): Promise<void> {
    this.sampling ??= this.sampleNodes().finally(() => (this.sampling = undefined));
    return this.sampling;
  }

  /** A sample unless one was taken within `maxAgeMs`: the charts are up to date when read. */
  async fresh(maxAgeMs: number): Promise<void> {
    if (this.clock() - this.sampledAt > maxAgeMs) await this.sample();
  }

  private async sampleNodes(): Promise<void> {
    const errors: string[] = [];
    await Promise.all(
      this.statusUrls.map(async (url) => {
        try {
          const totals = await scrapeNodes([url]);
          this.record(url.href, totals.counts.byConsumer, this.clock());
        } catch (error) {
          errors.push((error as Error).message);
        }
      }),
    );
    this.sampledAt = this.clock();
    this.lastError = errors.length > 0 ? errors.join('; ') : undefined;
    if (this.firstSampleAt === undefined && this.last.size === this.statusUrls.length) this.firstSampleAt = this.sampledAt;
  }

  /**
   * What a node's totals added since its previous sample, per consumer and class, into the hour of
   * `now`. A node's first sample is only the baseline; a total below the previous one means the node
   * restarted (its counters start again from 0), so the total itself is what was added.
   */
  private record(node: string, totals: Map<string, UsageCounts>, now: number): void {
    const previous = this.last.get(node);
    const kept = new Map([...totals].filter(([consumer]) => this.keep(consumer)));
    this.last.set(node, kept);
    if (!previous) return;
    const hour = Math.floor(now / HOUR_MS) * HOUR_MS;
    for (const [consumer, counts] of kept) {
      const before = previous.get(consumer) ?? emptyCounts();
      let hours = this.hours.get(consumer);
      if (!hours) this.hours.set(consumer, (hours = new Map<number, UsageCounts>()));
      let bucket = hours.get(hour);
      if (!bucket) hours.set(hour, (bucket = emptyCounts()));
      for (const column of CLASSES) {
        const added = counts[column] >= before[column] ? counts[column] - before[column] : counts[column];
        bucket[column] += added;
        bucket.requests += added;
      }
    }
    for (const byHour of this.hours.values()) for (const start of byHour.keys()) if (start < now - KEEP_MS) byHour.delete(start);
  }

  /** The consumer's buckets of each chart, from what the samples added. */
  series(consumer: string, now: number): RequestSeries[] {
    const hours = this.hours.get(consumer) ?? new Map<number, UsageCounts>();
    return CHART_RANGES.map((range) => ({
      range: range.id,
      label: range.label,
      stepSeconds: range.stepMs / 1000,
      buckets: chartBuckets(range, now).map(({ from, to }) => {
        const counts = emptyCounts();
        for (const [start, added] of hours) {
          if (start < from || start >= from + range.stepMs) continue;
          for (const column of COUNT_COLUMNS) counts[column] += added[column];
        }
        return { from, to, counts };
      }),
    }));
  }
}
