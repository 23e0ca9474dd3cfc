import { UsageError } from '../common/errors.ts';
import { httpUrl } from '../common/http-url.ts';
import { DEFAULT_STATUS_URL, displayUrl, metricsUrl } from '../../../packages/usage/index.ts';

/** Where usage reads its numbers: Prometheus (windows), or each node's /metrics (totals since start). */
export type UsageSource = { kind: 'prometheus'; url: URL } | { kind: 'nodes'; statusUrls: URL[] };

const DEFAULT_PROMETHEUS_HINT = 'http://127.0.0.1:9090';

/**
 * --prometheus-url, else --status-url (repeatable), else PROMETHEUS_URL, else the default
 * Status API: an option given on the command line wins over the environment.
 */
export function usageSource(options: { prometheusUrl?: string; statusUrl?: string[] }, env: NodeJS.ProcessEnv): UsageSource {
  if (options.prometheusUrl !== undefined && options.statusUrl !== undefined) {
    throw new UsageError('--prometheus-url and --status-url are two ways to count: give one');
  }
  if (options.prometheusUrl !== undefined) {
    return { kind: 'prometheus', url: httpUrl(options.prometheusUrl, '--prometheus-url', DEFAULT_PROMETHEUS_HINT) };
  }
  if (options.statusUrl === undefined && env.PROMETHEUS_URL) {
    return { kind: 'prometheus', url: httpUrl(env.PROMETHEUS_URL, 'PROMETHEUS_URL', DEFAULT_PROMETHEUS_HINT) };
  }
  const given = options.statusUrl ?? [DEFAULT_STATUS_URL];
  const statusUrls = given.map((value) => httpUrl(value, '--status-url', DEFAULT_STATUS_URL));
  // the same address twice (with or without a trailing slash or /metrics) would sum one node twice
  const seen = new Map<string, number>();
  for (const [i, url] of statusUrls.entries()) {
    const key = metricsUrl(url).href;
    const first = seen.get(key);
    if (first !== undefined) {
      const shown = (j: number) => (statusUrls[j]!.username || statusUrls[j]!.password ? displayUrl(statusUrls[j]!) : given[j]!);
      throw new UsageError(`--status-url ${shown(first)} and ${shown(i)} are the same Status API: its node would be counted twice`);
    }
    seen.set(key, i);
  }
  return { kind: 'nodes', statusUrls };
}
