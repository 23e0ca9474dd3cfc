import { InvalidArgumentError } from 'commander';
import { planOption } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { UsageError } from '../common/errors.ts';
import { describeExpiry, describeScopes, isoTime, renderTable } from '../common/output.ts';
import type { PlanName } from '../../../packages/provisioning/index.ts';
import { parseDuration } from '../../../packages/usage/index.ts';

type Options = ConnectionOptions & { plan?: PlanName; tag?: string; expiring?: number };

function withinSeconds(value: string): number {
  const ms = parseDuration(value);
  if (ms === null) throw new InvalidArgumentError('It must be a duration such as 7d, 24h or 2w.');
  return Math.floor(ms / 1000);
}

/** A tag as Kong takes one (kong/db/schema/typedefs.lua:118-134 at 3.9.3, validate_tag): not empty, no `,`, `/` nor control character. */
function tag(value: string): string {
  if (value === '') throw new InvalidArgumentError('It must not be empty.');
  // eslint-disable-next-line no-control-regex
  if (/[,/\x00-\x1f\x7f]/.test(value)) throw new InvalidArgumentError('It must be a tag as Kong takes one: no ",", "/" or control character.');
  return value;
}

/** `list`: the consumers the CLI manages, as a table or JSON; with --expiring, their keys about to expire. */
export const listCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    parent
      .command('list')
      .description('consumers the CLI manages; with --expiring, their keys that expire soon')
      .addOption(planOption('only consumers of this plan'))
      .option('--tag <tag>', 'only consumers that also carry this tag', tag)
      .option('--expiring <duration>', 'instead: keys that expire within this (7d, 24h), soonest first', withinSeconds),
  ).action(async (options: Options) => {
    if (options.expiring !== undefined) {
      if (options.plan !== undefined || options.tag !== undefined) throw new UsageError('--expiring lists keys of every consumer: leave out --plan and --tag');
      const keys = await cli.provisioning(options).expiringKeys(options.expiring);
      if (options.json) cli.out(JSON.stringify(keys));
      else
        cli.out(
          renderTable(
            ['USERNAME', 'KEY', 'FINGERPRINT', 'SCOPES', 'EXPIRES'],
            keys.map(({ username, key }) => [username, key.name, key.fingerprint, describeScopes(key.scopes), describeExpiry(key)]),
          ),
        );
      return;
    }
    const rows = [];
    for await (const consumer of cli.provisioning(options).list({ plan: options.plan, tag: options.tag })) {
      const plan = (consumer.tags ?? []).find((t) => t.startsWith('plan:'))?.slice(5) ?? '-';
      rows.push({
        username: consumer.username ?? '',
        plan,
        custom_id: (consumer.custom_id as string | null | undefined) ?? null,
        id: consumer.id,
        created_at: consumer.created_at,
      });
    }
    if (options.json) cli.out(JSON.stringify(rows));
    else
      cli.out(
        renderTable(
          ['USERNAME', 'PLAN', 'CUSTOM ID', 'CREATED'],
          rows.map((r) => [r.username, r.plan, r.custom_id ?? '-', isoTime(r.created_at ?? 0)]),
        ),
      );
  });
