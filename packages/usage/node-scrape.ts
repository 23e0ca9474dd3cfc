import { CountsByConsumer } from './counts.ts';
import { parseExposition } from './exposition.ts';
import { displayUrl, getText, ServerError } from './http.ts';
import { isOurService, LABELS, SERIES } from './series.ts';

export const DEFAULT_STATUS_URL = 'http://127.0.0.1:8100';
const TIMEOUT_MS = 10_000;
/** Kong's /metrics grows with services × routes × codes × consumers; far above any real node's. */
const MAX_BODY_BYTES = 64 * 2 ** 20;
/** Every node's exporter serves it with the node's id (kong/plugins/prometheus/exporter.lua). */
const NODE_INFO = 'kong_node_info';

/** Two Status API addresses answered for one node: their sum would count its requests twice. */
export class SameNodeError extends Error {
  constructor(first: string, second: string, nodeId: string) {
    super(`${first} and ${second} are the same Kong node (node_id ${nodeId}): its requests would be counted twice`);
  }
}

/** The /metrics address of a Status API given as its base URL (or already as …/metrics). */
export function metricsUrl(statusUrl: URL): URL {
  if (statusUrl.pathname.endsWith('/metrics')) return statusUrl;
  const url = new URL(statusUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/metrics`;
  return url;
}

export interface NodeTotals {
  /** Per consumer username: the node's counters summed, since each node started. */
  counts: CountsByConsumer;
  /** Whether any node exposed kong_http_requests_total at all, and with a consumer. */
  sawRequests: boolean;
  sawConsumers: boolean;
}

/**
 * Scrapes each Kong node's /metrics (Status API) and sums the counters across nodes: the
 * totals since each node started, which is all a node keeps. Requests count on our services only.
 * Two addresses of one node (its kong_node_info's node_id) are a SameNodeError.
 */
export async function scrapeNodes(statusUrls: URL[], onlyConsumer?: string): Promise<NodeTotals> {
  const bodies = await Promise.all(
    statusUrls.map(async (statusUrl) => {
      const url = metricsUrl(statusUrl);
      const what = `the Kong Status API at ${displayUrl(url)}`;
      const { status, body } = await getText(url, what, { timeoutMs: TIMEOUT_MS, maxBytes: MAX_BODY_BYTES });
      if (status !== 200) throw new ServerError(`${what} answered ${status}`);
      return { body, source: displayUrl(url) };
    }),
  );
  const totals: NodeTotals = { counts: new CountsByConsumer(), sawRequests: false, sawConsumers: false };
  const sources = new Map<string, string>();
  for (const { body, source } of bodies) {
    for (const sample of parseExposition(body, source)) {
      if (sample.name === NODE_INFO && sample.labels.node_id) {
        const seen = sources.get(sample.labels.node_id);
        if (seen !== undefined && seen !== source) throw new SameNodeError(seen, source, sample.labels.node_id);
        sources.set(sample.labels.node_id, source);
      }
      const consumer = sample.labels[LABELS.consumer] ?? '';
      if (sample.name === SERIES.requests) {
        totals.sawRequests = true;
        if (consumer !== '') totals.sawConsumers = true;
      }
      // Requests without a consumer (refused before a key was identified) are no one's usage.
      if (consumer === '' || (onlyConsumer !== undefined && consumer !== onlyConsumer)) continue;
      // Another team's services are not our usage, whoever the consumer (the banned series are
      // the edge plugin's, which runs on ours only).
      if (sample.name === SERIES.requests && !isOurService(sample.labels[LABELS.service])) continue;
      if (sample.name === SERIES.requests) totals.counts.addStatus(consumer, sample.labels[LABELS.code] ?? '', sample.value);
      else if (sample.name === SERIES.bannedRequests) totals.counts.addBanned(consumer, sample.value);
    }
  }
  return totals;
}
