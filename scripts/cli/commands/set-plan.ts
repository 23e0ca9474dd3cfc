import { consumerCommand, customLimits, planOption, withLimitOptions, type LimitOptions } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { describeLimits } from '../common/output.ts';
import type { PlanName } from '../../../packages/provisioning/index.ts';

type Options = ConnectionOptions & LimitOptions & { plan: PlanName };

/** `set-plan`: moves a consumer to another plan; the gateway applies it from the next request. */
export const setPlanCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    withLimitOptions(
      consumerCommand(parent, 'set-plan', "change a consumer's plan; the gateway applies it from the next request").addOption(
        planOption('the new plan').makeOptionMandatory(),
      ),
    ),
  ).action(async (username: string, options: Options) => {
    const result = await cli.provisioning(options).setPlan(username, options.plan, customLimits(options));
    cli.out(options.json ? JSON.stringify(result) : `${result.username} is now on plan ${result.plan} (${describeLimits(result.limits)})`);
  });
