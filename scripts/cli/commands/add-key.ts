import { consumerCommand } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { keyExpiry, withExpiryOptions, withScopeOption, type KeyOptionValues } from '../common/key-options.ts';
import { describeNewKey } from '../common/output.ts';

/** `add-key`: one more key for the consumer (printed once), under its own name, scopes and expiry. */
export const addKeyCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    withExpiryOptions(
      withScopeOption(
        consumerCommand(parent, 'add-key', 'one more key for the consumer (printed once), e.g. one per machine or use').requiredOption(
          '--name <name>',
          "the key's name, unique among the consumer's keys: a-z, 0-9, '.', '_', '-'",
        ),
        'what the key may do (default: everything)',
      ),
    ),
  ).action(async (username: string, options: ConnectionOptions & KeyOptionValues & { name: string }) => {
    const key = { name: options.name, scopes: options.scope ?? [], ...keyExpiry(options) };
    const added = await cli.provisioning(options).addKey(username, key);
    if (options.json) {
      cli.out(JSON.stringify(added));
      return;
    }
    cli.out(`API key ${added.name} for ${added.username} (shown once, store it now): ${added.key}`);
    cli.out(`key fingerprint: ${added.fingerprint} (how show names this key)`);
    cli.out(describeNewKey(added) ?? `key ${added.name}: scopes all, expires never`);
  });
