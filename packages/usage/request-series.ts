import { emptyCounts, rounded, statusClass, type UsageCounts } from './counts.ts';
import { promqlString, type MatrixSeries, type PrometheusApi } from './prometheus-api.ts';
import { LABELS, OUR_SERVICES_MATCHER, SERIES } from './series.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The portal's two charts: the last 24 hours by hour, the last 7 UTC days by day; the last bucket of each is the current one, so far. */
export const CHART_RANGES = [
  { id: '24h', label: 'Last 24 hours, per hour (UTC)', stepMs: HOUR_MS, steps: 24 },
  { id: '7d', label: 'Last 7 days, per UTC day', stepMs: DAY_MS, steps: 7 },
] as const;
export type ChartRange = (typeof CHART_RANGES)[number];

export interface RequestBucket {
  /** Unix ms; `to` of the last bucket is the time of the query. */
  from: number;
  to: number;
  counts: UsageCounts;
}

export interface RequestSeries {
  range: ChartRange['id'];
  label: string;
  stepSeconds: number;
  buckets: RequestBucket[];
}

/** The buckets of `range` at `now`: aligned on the step in UTC (hours, days), the last one from its start to now. */
export function chartBuckets(range: ChartRange, now: number): Array<{ from: number; to: number }> {
  const current = Math.floor(now / range.stepMs) * range.stepMs;
  return Array.from({ length: range.steps }, (_, i) => {
    const from = current - (range.steps - 1 - i) * range.stepMs;
    return { from, to: Math.min(from + range.stepMs, now) };
  });
}

/** The two expressions of one consumer over windows of `rangeMs`: requests by code, and requests refused while banned. */
function seriesQueries(consumer: string, rangeMs: number): { requests: string; banned: string } {
  const matcher = `${LABELS.consumer}=${promqlString(consumer)}`;
  const range = `[${rangeMs}ms]`;
  return {
    // on our services only, as `consumers usage` counts (series.ts)
    requests: `sum by (${LABELS.code}) (increase(${SERIES.requests}{${OUR_SERVICES_MATCHER},${matcher}}${range}))`,
    banned: `sum(increase(${SERIES.bannedRequests}{${matcher}}${range}))`,
  };
}

/**
 * One consumer's requests per bucket of `range`, by status class, from Prometheus: the whole
 * buckets in one range query (increase() over one step, evaluated at each bucket's end), the
 * current bucket in an instant query over its part so far. Each class is rounded per bucket, as
 * `consumers usage` rounds each window (docs/usage.md: how exact).
 */
export async function prometheusRequestSeries(
  prometheus: PrometheusApi,
  consumer: string,
  range: ChartRange,
  now: number,
): Promise<RequestSeries> {
  const buckets = chartBuckets(range, now);
  const raw = buckets.map(() => emptyCounts());
  const indexByEnd = new Map(buckets.map((bucket, i) => [bucket.to, i]));
  type Answer = MatrixSeries[] | Array<{ metric: Record<string, string>; value: number }>;
  const add = (series: Answer, at: (t: number) => number | undefined, banned: boolean) => {
    for (const one of series) {
      const points = 'values' in one ? one.values : [[now / 1000, one.value] as [number, number]];
      for (const [time, value] of points) {
        const index = at(Math.round(time * 1000));
        if (index === undefined) continue;
        if (banned) raw[index]!.banned += value;
        else raw[index]![statusClass(one.metric[LABELS.code] ?? '')] += value;
      }
    }
  };
  const whole = buckets.slice(0, -1);
  const current = buckets.at(-1)!;
  const wholeQueries = seriesQueries(consumer, range.stepMs);
  const currentQueries = current.to > current.from ? seriesQueries(consumer, current.to - current.from) : undefined;
  const span = { start: new Date(whole[0]!.to), end: new Date(whole.at(-1)!.to), stepSeconds: range.stepMs / 1000 };
  const [requests, banned, currentRequests, currentBanned] = await Promise.all([
    prometheus.queryRange(wholeQueries.requests, span),
    prometheus.queryRange(wholeQueries.banned, span),
    currentQueries ? prometheus.query(currentQueries.requests, new Date(now)) : [],
    currentQueries ? prometheus.query(currentQueries.banned, new Date(now)) : [],
  ]);
  add(requests, (t) => indexByEnd.get(t), false);
  add(banned, (t) => indexByEnd.get(t), true);
  const last = () => buckets.length - 1;
  add(currentRequests, last, false);
  add(currentBanned, last, true);
  return {
    range: range.id,
    label: range.label,
    stepSeconds: range.stepMs / 1000,
    buckets: buckets.map((bucket, i) => ({ ...bucket, counts: rounded(raw[i]!) })),
  };
}
