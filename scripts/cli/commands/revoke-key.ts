import { consumerCommand } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';

/** `revoke-key`: the consumer's keys (or those of one name) stop working now. */
export const revokeKeyCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    consumerCommand(parent, 'revoke-key', 'revoke every key of the consumer now, or with --name only that one').option(
      '--name <name>',
      'only the key of this name (and its predecessor, if still in its grace period)',
    ),
  ).action(async (username: string, options: ConnectionOptions & { name?: string }) => {
    const revoked = await cli.provisioning(options).revokeKeys(username, options.name !== undefined ? { name: options.name } : {});
    cli.out(options.json ? JSON.stringify({ username, revoked }) : `revoked ${revoked} key(s) of ${username}`);
  });
