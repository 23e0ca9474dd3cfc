import { consumerCommand } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';

/** `delete`: the consumer, its keys and its plan (Kong cascades). */
export const deleteCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(consumerCommand(parent, 'delete', 'delete the consumer, its keys and its plan')).action(
    async (username: string, options: ConnectionOptions) => {
      await cli.provisioning(options).delete(username);
      cli.out(options.json ? JSON.stringify({ username, deleted: true }) : `deleted ${username}`);
    },
  );
