import { CountsByConsumer } from './counts.ts';
import { promqlString, type PrometheusApi } from './prometheus-api.ts';
import { LABELS, OUR_SERVICES_MATCHER, SERIES } from './series.ts';
import type { UsageWindow } from './time-windows.ts';

/** How many windows (days) are asked about at once. */
const CONCURRENCY = 4;

/**
 * The two queries of one window, evaluated at its end: increase() over exactly the window, so
 * counter resets (a node restarting) and several nodes (one series each, summed) are handled as
 * PromQL handles them. Requests count on our services only (the banned series are the edge
 * plugin's, which runs on ours only). Both keep consumer "" (no consumer), which the caller leaves out.
 */
export function usageQueries(window: UsageWindow, onlyConsumer?: string): { requests: string; banned: string } {
  const range = `[${window.to.getTime() - window.from.getTime()}ms]`;
  const consumer = onlyConsumer === undefined ? [] : [`${LABELS.consumer}=${promqlString(onlyConsumer)}`];
  const selector = (matchers: string[]) => (matchers.length === 0 ? '' : `{${matchers.join(',')}}`);
  return {
    requests: `sum by (${LABELS.consumer}, ${LABELS.code}) (increase(${SERIES.requests}${selector([OUR_SERVICES_MATCHER, ...consumer])}${range}))`,
    banned: `sum by (${LABELS.consumer}) (increase(${SERIES.bannedRequests}${selector(consumer)}${range}))`,
  };
}

export interface WindowUsage {
  window: UsageWindow;
  counts: CountsByConsumer;
  /** kong_http_requests_total had data in the window, and some of it carried a consumer. */
  sawRequests: boolean;
  sawConsumers: boolean;
}

async function oneWindow(prometheus: PrometheusApi, window: UsageWindow, onlyConsumer?: string): Promise<WindowUsage> {
  const queries = usageQueries(window, onlyConsumer);
  const [requests, banned] = await Promise.all([
    prometheus.query(queries.requests, window.to),
    prometheus.query(queries.banned, window.to),
  ]);
  const usage: WindowUsage = { window, counts: new CountsByConsumer(), sawRequests: requests.length > 0, sawConsumers: false };
  for (const { metric, value } of requests) {
    const consumer = metric[LABELS.consumer] ?? '';
    if (consumer === '') continue;
    usage.sawConsumers = true;
    usage.counts.addStatus(consumer, metric[LABELS.code] ?? '', value);
  }
  for (const { metric, value } of banned) {
    const consumer = metric[LABELS.consumer] ?? '';
    if (consumer !== '') usage.counts.addBanned(consumer, value);
  }
  return usage;
}

/** Usage per window from Prometheus, in the windows' order. */
export async function prometheusUsage(prometheus: PrometheusApi, windows: UsageWindow[], onlyConsumer?: string): Promise<WindowUsage[]> {
  const results: WindowUsage[] = new Array<WindowUsage>(windows.length);
  let next = 0;
  const worker = async () => {
    while (next < windows.length) {
      const index = next++;
      results[index] = await oneWindow(prometheus, windows[index]!, onlyConsumer);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, windows.length) }, worker));
  return results;
}
