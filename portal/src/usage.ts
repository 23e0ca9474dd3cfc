// The account's usage from the sources `npm run consumers -- usage` and `show` read (docs/usage.md):
// the consumer's current minute and day from its plan's counters where they are readable (policy
// redis), and otherwise the data plane's Status API totals (/metrics) since each node started.
import type { Plugin } from '../../packages/provisioning/index.ts';
import { currentWindows, rounded, scrapeNodes, type CurrentWindows, type UsageCounts } from '../../packages/usage/index.ts';

export interface AccountUsage {
  windows: CurrentWindows;
  /** Totals since each node started, or why they could not be read. */
  totals: { counts: UsageCounts | null } | { error: string };
}

export class PortalUsage {
  constructor(
    private readonly statusUrls: URL[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** The plan's current minute and day, from the plan plugin the overview read (no Admin API call of its own). */
  windows(consumerId: string, planPlugin: Plugin | undefined): Promise<CurrentWindows> {
    return currentWindows(planPlugin, consumerId, this.env);
  }

  /** The Status API's totals: independent of the Admin API, so read while it answers; never rejects. */
  async totals(consumer: string): Promise<AccountUsage['totals']> {
    if (this.statusUrls.length === 0) return { error: 'no Status API is configured (KONG_STATUS_URL)' };
    return scrapeNodes(this.statusUrls, consumer).then(
      (nodes) => {
        const counts = nodes.counts.byConsumer.get(consumer);
        // `requests` is the sum of the classes, which rounded() computes
        return { counts: counts ? rounded(counts) : null };
      },
      (error: Error) => ({ error: error.message }),
    );
  }
}
