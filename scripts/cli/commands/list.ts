import { planOption } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { isoTime, renderTable } from '../common/output.ts';
import type { PlanName } from '../../../packages/provisioning/index.ts';

type Options = ConnectionOptions & { plan?: PlanName; tag?: string };

/** `list`: the consumers the CLI manages, as a table or JSON. */
export const listCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    parent
      .command('list')
      .description('consumers the CLI manages')
      .addOption(planOption('only consumers of this plan'))
      .option('--tag <tag>', 'only consumers that also carry this tag'),
  ).action(async (options: Options) => {
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
