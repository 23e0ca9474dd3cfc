import { Option } from 'commander';
import { nonEmpty } from '../common/arguments.ts';
import { adminApi, withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { UsageError } from '../common/errors.ts';
import { dayCount, DEFAULT_STATUS_URL, MAX_DAYS, parseDuration, parseInstant } from '../../../packages/usage/index.ts';
import { FORMATS, renderCsv, renderJson, renderUsageTable, type Format } from '../usage/report.ts';
import { usageReport } from '../usage/run-usage.ts';
import { usageSource } from '../usage/sources.ts';

type Options = ConnectionOptions & {
  since?: string;
  until?: string;
  by?: 'day';
  format?: Format;
  prometheusUrl?: string;
  statusUrl?: string[];
};

const DEFAULT_SINCE = '24h';

const repeat = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

function format(options: Options): Format {
  if (options.json && options.format !== undefined && options.format !== 'json') {
    throw new UsageError(`--json and --format ${options.format} disagree: give one`);
  }
  return options.json ? 'json' : (options.format ?? 'table');
}

/** `usage`: requests per consumer, by how they were answered, beside each consumer's plan. */
export const usageCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    parent
      .command('usage')
      .description('requests per consumer (2xx, 4xx, 429, banned…) beside its plan, from Prometheus or the nodes')
      .argument('[username]', 'only this consumer', nonEmpty)
      .option(
        '--since <when>',
        `the window's start: a duration back from --until (30m, 24h, 7d, 1d12h) or a time like --until (Prometheus only; default ${DEFAULT_SINCE})`,
      )
      .option('--until <time>', 'the end of the window: 2030-01-31 (UTC midnight) or an ISO time with Z or an offset (default now)')
      .addOption(new Option('--by <period>', 'one row per consumer per UTC day: the billing export (Prometheus only)').choices(['day']))
      .addOption(new Option('--format <format>', 'output (default table)').choices(FORMATS))
      .option('--prometheus-url <url>', 'count with Prometheus (env PROMETHEUS_URL), e.g. http://127.0.0.1:9090')
      .option(
        '--status-url <url>',
        `a Kong node's Status API, repeatable: sums the nodes' /metrics, totals since each started (default ${DEFAULT_STATUS_URL})`,
        repeat,
      ),
  ).action(async (username: string | undefined, options: Options) => {
    const output = format(options);
    const source = usageSource(options, cli.env);
    const given = (['since', 'until', 'by'] as const).filter((name) => options[name] !== undefined).map((name) => `--${name}`);
    if (source.kind === 'nodes' && given.length > 0) {
      throw new UsageError(
        `${given.join(', ')} need${given.length === 1 ? 's' : ''} Prometheus (--prometheus-url or PROMETHEUS_URL): ` +
          'a node keeps only its totals since it started',
      );
    }
    const until = options.until === undefined ? new Date() : parseInstant(options.until);
    if (until === null) {
      throw new UsageError(`--until must be a date (2030-01-31) or an ISO time with Z or an offset, got ${JSON.stringify(options.until)}`);
    }
    const since = options.since ?? DEFAULT_SINCE;
    const sinceMs = parseDuration(since) ?? until.getTime() - (parseInstant(since)?.getTime() ?? NaN);
    if (Number.isNaN(sinceMs)) {
      throw new UsageError(`--since must be a duration such as 30m, 24h, 7d or 1d12h, or a time like --until, got ${JSON.stringify(options.since)}`);
    }
    if (sinceMs <= 0) throw new UsageError(`--since must be before --until (${options.until ?? 'now'})`);
    if (options.by === 'day' && dayCount(sinceMs, until) > MAX_DAYS) throw new UsageError(`--by day covers at most ${MAX_DAYS} days`);
    const report = await usageReport({ source, admin: adminApi(options, cli.env), username, sinceMs, until, byDay: options.by === 'day' });
    for (const note of report.notes) cli.progress(`note: ${note}`);
    if (output === 'json') cli.out(renderJson(report.rows, options.by === 'day'));
    else if (output === 'csv') cli.out(renderCsv(report.rows, options.by === 'day'));
    else cli.out(renderUsageTable(report.rows, options.by === 'day', report.heading));
  });
