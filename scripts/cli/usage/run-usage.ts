import { CONSUMER_TAG, KONG_YML_SELECT_TAG, ProvisioningError, type AdminApi } from '../../../packages/provisioning/index.ts';
import {
  displayUrl,
  isEmpty,
  isoSeconds,
  metricsUrl,
  plansOf,
  PrometheusApi,
  prometheusUsage,
  rounded,
  SameNodeError,
  scrapeNodes,
  SERIES,
  usageWindows,
  type CountsByConsumer,
} from '../../../packages/usage/index.ts';
import { UsageError } from '../common/errors.ts';
import { usageRow, type UsageRow } from './report.ts';
import type { UsageSource } from './sources.ts';

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const NODE_TOTALS_NOTE = 'totals since each node started';

export interface UsageRequest {
  source: UsageSource;
  admin: AdminApi;
  /** One consumer only; its row is there even without requests. */
  username?: string;
  /** Prometheus only: the window [until − since, until], or every UTC day it touches. */
  sinceMs: number;
  until: Date;
  byDay: boolean;
}

export interface UsageReport {
  rows: UsageRow[];
  /** What was counted, one line (the table's heading). */
  heading: string;
  /** Lines for stderr: what the numbers are not, and what looks misconfigured. */
  notes: string[];
}

interface Measured {
  day?: string;
  from: Date | null;
  to: Date;
  counts: CountsByConsumer;
}

const NODES_WITHOUT_REQUESTS = `no ${SERIES.requests} at all: is Kong's prometheus plugin on, with status_code_metrics?`;

/** `noRequests`: what it means that no request series was seen (nodes: a setting; Prometheus: maybe just a quiet window). */
function configurationNotes(sawRequests: boolean, sawConsumers: boolean, username: string | undefined, noRequests: string): string[] {
  if (username !== undefined) return [];
  if (!sawRequests) return [noRequests];
  if (!sawConsumers) return [`${SERIES.requests} carries no consumer: turn on per_consumer in the prometheus plugin's config`];
  return [];
}

async function measure(request: UsageRequest): Promise<{ measured: Measured[]; heading: string; note: string; notes: string[] }> {
  const { source, username } = request;
  if (source.kind === 'nodes') {
    const totals = await scrapeNodes(source.statusUrls, username).catch((error: unknown) => {
      // the billing export refuses rather than guess which address was meant
      throw error instanceof SameNodeError ? new UsageError(`--status-url ${error.message}`) : error;
    });
    const nodes = source.statusUrls.map((url) => displayUrl(metricsUrl(url)));
    return {
      measured: [{ from: null, to: new Date(), counts: totals.counts }],
      heading: `${NODE_TOTALS_NOTE} (${nodes.join(', ')})`,
      note: NODE_TOTALS_NOTE,
      notes: [
        `these are ${NODE_TOTALS_NOTE} (${nodes.length} node${nodes.length === 1 ? '' : 's'}), not a window: ` +
          'give --prometheus-url or PROMETHEUS_URL for --since and --by day',
        ...configurationNotes(totals.sawRequests, totals.sawConsumers, username, NODES_WITHOUT_REQUESTS),
      ],
    };
  }
  const prometheus = new PrometheusApi(source.url);
  const windows = usageWindows(request.sinceMs, request.until, request.byDay);
  const usage = await prometheusUsage(prometheus, windows, username);
  const first = windows[0]!;
  const per = request.byDay ? ' per UTC day' : '';
  return {
    measured: usage.map(({ window, counts }) => ({ day: window.day, from: window.from, to: window.to, counts })),
    heading: `requests${per} from ${isoSeconds(first.from)} to ${isoSeconds(request.until)} (Prometheus at ${prometheus.displayUrl})`,
    note: '',
    notes: configurationNotes(
      usage.some((u) => u.sawRequests),
      usage.some((u) => u.sawConsumers),
      username,
      `no ${SERIES.requests} samples from ${isoSeconds(first.from)} to ${isoSeconds(request.until)}: ` +
        "no requests then, or Prometheus did not scrape Kong's prometheus plugin (with status_code_metrics) in that window",
    ),
  };
}

/**
 * Usage per consumer (and per day), with each consumer's plan from the Admin API. Our consumers
 * only: on a shared Kong, another team's consumers (in the Admin API, with neither the CLI's tag
 * nor kong.yml's) are left out; a username the Admin API does not know keeps its usage, which is
 * on our services (the series are).
 */
export async function usageReport(request: UsageRequest): Promise<UsageReport> {
  const { measured, heading, note, notes } = await measure(request);
  const usernames = new Set<string>(request.username !== undefined ? [request.username] : []);
  for (const { counts } of measured) for (const [username, c] of counts.byConsumer) if (!isEmpty(rounded(c))) usernames.add(username);
  const plans = await plansOf(request.admin, [...usernames].sort());
  for (const username of usernames) {
    const plan = plans.get(username);
    if (!plan?.exists || plan.ours) continue;
    if (username === request.username) {
      throw new ProvisioningError('consumer-not-managed', `consumer ${username} is another team's (neither ${CONSUMER_TAG} nor ${KONG_YML_SELECT_TAG}): usage counts ours only`);
    }
    usernames.delete(username);
  }
  const rows: UsageRow[] = [];
  for (const window of measured) {
    for (const username of usernames) {
      const counts = rounded(window.counts.of(username));
      if (isEmpty(counts) && username !== request.username) continue;
      rows.push(usageRow(username, plans.get(username), counts, { ...window, note }));
    }
  }
  // By day: a consumer's days together (the billing export); else the busiest first.
  rows.sort((a, b) =>
    request.byDay ? compare(a.username, b.username) || compare(a.day ?? '', b.day ?? '') : b.requests - a.requests || compare(a.username, b.username),
  );
  for (const username of usernames) {
    if (plans.get(username)?.exists === false) notes.push(`consumer ${username} is not in the Admin API (deleted?): its usage is shown without a plan`);
  }
  return { rows, heading, notes };
}
