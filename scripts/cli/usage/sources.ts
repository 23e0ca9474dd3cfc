import { UsageError } from '../common/errors.ts';
import { httpUrl } from '../common/http-url.ts';
import { DEFAULT_STATUS_URL } from '../../../packages/usage/index.ts';

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
  const statusUrls = (options.statusUrl ?? [DEFAULT_STATUS_URL]).map((value) => httpUrl(value, '--status-url', DEFAULT_STATUS_URL));
  return { kind: 'nodes', statusUrls };
}
