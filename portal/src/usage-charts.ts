// The data of the dashboard's charts: one account's requests over the last 24 h and 7 days, by
// status class, from Prometheus where it runs (PORTAL_PROMETHEUS_URL: compose), else from the
// portal's own samples of the data planes' Status API (`npm start`), else none.
import type { Clock } from './clock.ts';
import { CHART_RANGES, isoSeconds, PrometheusApi, prometheusRequestSeries, type RequestSeries } from '../../packages/usage/index.ts';
import { UsageSamples } from './usage-samples.ts';

/** What GET /portal/usage/requests.json answers: a consumer's buckets, and what they can and cannot show. */
interface ChartData {
  source: 'prometheus' | 'portal-samples';
  /** One sentence for the page, under the charts. */
  note: string;
  ranges: RequestSeries[];
}

export interface UsageCharts {
  /** The consumer's charts; rejects when the source cannot be read (the route answers 503). */
  of(consumer: string): Promise<ChartData>;
  start(): void;
  stop(): void;
}

class PrometheusCharts implements UsageCharts {
  private readonly prometheus: PrometheusApi;

  constructor(
    url: URL,
    private readonly clock: Clock,
  ) {
    this.prometheus = new PrometheusApi(url);
  }

  async of(consumer: string): Promise<ChartData> {
    const now = this.clock();
    const ranges = await Promise.all(CHART_RANGES.map((range) => prometheusRequestSeries(this.prometheus, consumer, range, now)));
    return {
      source: 'prometheus',
      note: "Counted by the gateway and kept by Prometheus; each bucket is exact to within one scrape (15 s) at its edges, and a key's very first requests on a node that just started can be missing.",
      ranges,
    };
  }

  start(): void {}
  stop(): void {}
}

/** A sample on every read older than this: the charts show a request made a moment ago. */
const FRESH_MS = 1000;

class SampledCharts implements UsageCharts {
  private readonly samples: UsageSamples;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    statusUrls: URL[],
    private readonly clock: Clock,
    private readonly intervalMs: number,
    keep: (consumer: string) => boolean,
  ) {
    this.samples = new UsageSamples(statusUrls, clock, keep);
  }

  async of(consumer: string): Promise<ChartData> {
    await this.samples.fresh(FRESH_MS);
    const { firstSampleAt, lastError } = this.samples;
    if (firstSampleAt === undefined) throw new Error(lastError ?? 'the gateway has not been sampled yet');
    return {
      source: 'portal-samples',
      note:
        `Sampled by this portal from the gateway since ${isoSeconds(new Date(Math.floor(firstSampleAt / 1000) * 1000)).replace('T', ' ').replace('Z', ' UTC')}: ` +
        'requests before then, or while the portal was stopped, are not shown.',
      ranges: this.samples.series(consumer, this.clock()),
    };
  }

  /** The first sample (the baseline) now, then one every interval. */
  start(): void {
    void this.samples.sample();
    this.timer = setInterval(() => void this.samples.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

class NoCharts implements UsageCharts {
  of(): Promise<ChartData> {
    return Promise.reject(new Error('no usage source is configured (PORTAL_PROMETHEUS_URL or KONG_STATUS_URL)'));
  }

  start(): void {}
  stop(): void {}
}

/** The charts' source the settings choose: Prometheus if given, else samples of the Status API(s), else none. */
export function usageCharts(
  settings: { prometheusUrl?: URL; statusUrls: URL[]; usageSampleSeconds?: number },
  clock: Clock,
  keep: (consumer: string) => boolean,
): UsageCharts {
  if (settings.prometheusUrl) return new PrometheusCharts(settings.prometheusUrl, clock);
  const intervalMs = (settings.usageSampleSeconds ?? 60) * 1000;
  if (settings.statusUrls.length > 0) return new SampledCharts(settings.statusUrls, clock, intervalMs, keep);
  return new NoCharts();
}
