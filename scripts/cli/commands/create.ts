import { customLimits, nonEmpty, planOption, withLimitOptions, type LimitOptions } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { keyExpiry, withExpiryOptions, withScopeOption, type KeyOptionValues } from '../common/key-options.ts';
import { describeLimits, describeNewKey } from '../common/output.ts';
import type { PlanName } from '../../../packages/provisioning/index.ts';

type Options = ConnectionOptions &
  LimitOptions &
  KeyOptionValues & { username: string; plan: PlanName; customId?: string; keyName?: string };

/** `create`: a consumer on a plan, with a new key printed once. */
export const createCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    withExpiryOptions(
      withScopeOption(
        withLimitOptions(
          parent
            .command('create')
            .description('a consumer with a new key (printed once)')
            .requiredOption('--username <name>', 'the consumer username', nonEmpty)
            .addOption(planOption('the plan').makeOptionMandatory())
            .option('--custom-id <id>', "the consumer's custom_id, e.g. your own customer id", nonEmpty)
            .option('--key-name <name>', 'the name of its key (default "default")'),
        ),
        'what the key may do (default: everything)',
      ),
    ),
  ).action(async (options: Options) => {
    const issued = await cli.provisioning(options).create({
      username: options.username,
      plan: options.plan,
      customId: options.customId,
      limits: customLimits(options),
      key: { ...keyExpiry(options), ...(options.keyName !== undefined ? { name: options.keyName } : {}), scopes: options.scope ?? [] },
    });
    if (options.json) {
      cli.out(JSON.stringify(issued));
      return;
    }
    cli.out(`created ${issued.username} on plan ${issued.plan} (${describeLimits(issued.limits)})`);
    cli.out(`API key (shown once, store it now): ${issued.key}`);
    cli.out(`key fingerprint: ${issued.fingerprint} (how show names this key)`);
    const terms = describeNewKey(issued);
    if (terms) cli.out(terms);
  });
