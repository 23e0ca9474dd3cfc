import { consumerCommand } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';

/** `revoke-key`: every key of the consumer stops working now. */
export const revokeKeyCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(consumerCommand(parent, 'revoke-key', 'revoke every key of the consumer now')).action(
    async (username: string, options: ConnectionOptions) => {
      const revoked = await cli.provisioning(options).revokeKeys(username);
      cli.out(options.json ? JSON.stringify({ username, revoked }) : `revoked ${revoked} key(s) of ${username}`);
    },
  );
