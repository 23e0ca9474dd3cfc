// The account's usage from the sources `npm run consumers -- usage` and `show` read (docs/usage.md):
// the consumer's current minute and day from its plan's counters where they are readable (policy
// redis), and otherwise the data plane's Status API totals (/metrics) since each node started.
import { AdminApi, type AdminConnection } from '../../packages/provisioning/index.ts';
import { currentWindows, rounded, scrapeNodes, type CurrentWindows, type UsageCounts } from '../../packages/usage/index.ts';

export interface AccountUsage {
  windows: CurrentWindows;
  /** Totals since each node started, or why they could not be read. */
  totals: { counts: UsageCounts | null } | { error: string };
}

export class PortalUsage {
  constructor(
    private readonly admin: AdminConnection,
    private readonly statusUrls: URL[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  async of(consumer: string, consumerId: string): Promise<AccountUsage> {
    const [windows, totals] = await Promise.all([
      currentWindows(AdminApi.connect(this.admin), consumerId, this.env),
      this.statusUrls.length === 0
        ? Promise.resolve({ error: 'no Status API is configured (KONG_STATUS_URL)' })
        : scrapeNodes(this.statusUrls, consumer).then(
            (nodes) => {
              const counts = nodes.counts.byConsumer.get(consumer);
              // `requests` is the sum of the classes, which rounded() computes
              return { counts: counts ? rounded(counts) : null };
            },
            (error: Error) => ({ error: error.message }),
          ),
    ]);
    return { windows, totals };
  }
}
