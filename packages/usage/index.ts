// The usage library's public entry: a consumer's requests by status class, read from the Kong
// nodes' Status API (/metrics, totals since each node started) or from Prometheus (windows), and
// its plan's current minute and day; what `npm run consumers -- usage` / `show` and the developer
// portal read (README.md).
export { plansOf, type PlanInfo } from './consumer-plans.ts';
export { COUNT_COLUMNS, CountsByConsumer, emptyCounts, isEmpty, rounded, type UsageCounts } from './counts.ts';
export { displayUrl } from './http.ts';
export { DEFAULT_STATUS_URL, metricsUrl, SameNodeError, scrapeNodes, type NodeTotals } from './node-scrape.ts';
export { PrometheusApi } from './prometheus-api.ts';
export { prometheusUsage, usageQueries } from './prometheus-usage.ts';
export {
  CHART_RANGES,
  chartBuckets,
  prometheusRequestSeries,
  type ChartRange,
  type RequestBucket,
  type RequestSeries,
} from './request-series.ts';
export { counterKey, currentWindows, describeWindows, EMPTY_UUID, type CurrentWindows } from './rate-limit-windows.ts';
export { LABELS, SERIES } from './series.ts';
export { dayCount, isoSeconds, MAX_DAYS, parseDuration, parseInstant, usageWindows, type UsageWindow } from './time-windows.ts';
