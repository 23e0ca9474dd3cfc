import type { CommandModule } from '../common/context.ts';
import { renderTable } from '../common/output.ts';
import { PLAN_NAMES } from '../../../packages/provisioning/index.ts';
import { plansSyncCommand } from './plans-sync.ts';

/** `plans`: the catalogue (gateway/plans.yaml); its subcommand `plans sync` pushes it. */
export const plansCommand: CommandModule = (parent, cli) => {
  const plans = parent
    .command('plans')
    .description('the plan catalogue (gateway/plans.yaml); "plans sync" pushes it to the consumers')
    .option('--json', 'machine-readable output')
    .action((options: { json?: boolean }) => {
      if (options.json) {
        cli.out(JSON.stringify(cli.plans()));
        return;
      }
      const rows = PLAN_NAMES.map((name) => {
        const entry = cli.plans().plans[name];
        return 'custom' in entry ? [name, 'custom', 'custom'] : [name, String(entry.minute), String(entry.day)];
      });
      cli.out(renderTable(['PLAN', 'PER MINUTE', 'PER DAY'], rows));
    });
  plansSyncCommand(plans, cli);
  return plans;
};
