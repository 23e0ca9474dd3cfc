import { planOption } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { PLAN_NAMES, type PlanName } from '../../../packages/provisioning/index.ts';

/** `plans sync`: pushes the catalogue's limits to every consumer of a plan, progress on stderr. */
export const plansSyncCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    parent
      .command('sync')
      .description("push the catalogue's limits to every consumer of a plan (progress on stderr)")
      .addOption(planOption('only this plan')),
  ).action(async (options: ConnectionOptions & { plan?: PlanName }) => {
    const only = options.plan ? [options.plan] : [...PLAN_NAMES];
    const counts = await cli.provisioning(options).syncPlans(only, (done, plan, name) => cli.progress(`synced ${plan} #${done}: ${name}`));
    cli.out(
      options.json
        ? JSON.stringify(counts)
        : Object.entries(counts)
            .map(([plan, n]) => `${plan}: ${n} consumer(s) updated`)
            .join('\n') || 'nothing to sync',
    );
  });
