import { consumerCommand, wholeNumber } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';

const DEFAULT_GRACE_SECONDS = 86400;

/** `rotate-key`: a new key printed once; the old ones keep working for the grace period. */
export const rotateKeyCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    consumerCommand(parent, 'rotate-key', 'a new key (printed once); the old keys keep working for the grace period').option(
      '--grace <seconds>',
      'how long the old keys keep working; 0 revokes them now',
      wholeNumber(0),
      DEFAULT_GRACE_SECONDS,
    ),
  ).action(async (username: string, options: ConnectionOptions & { grace: number }) => {
    const issued = await cli.provisioning(options).rotateKey(username, options.grace);
    if (options.json) {
      cli.out(JSON.stringify(issued));
      return;
    }
    const old = issued.graceSeconds === 0 ? 'revoked now' : `keep working for ${issued.graceSeconds}s`;
    cli.out(`new API key for ${issued.username} (shown once, store it now): ${issued.key}`);
    cli.out(`key fingerprint: ${issued.fingerprint} (how show names this key)`);
    cli.out(`${issued.previousKeys} previous key(s) ${old}`);
  });
