import { consumerCommand, wholeNumber } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { keyExpiry, withExpiryOptions, withScopeOption, type KeyOptionValues } from '../common/key-options.ts';
import { describeNewKey } from '../common/output.ts';

const DEFAULT_GRACE_SECONDS = 86400;

type Options = ConnectionOptions & KeyOptionValues & { grace: number; name?: string };

/** `rotate-key`: a new key printed once; the old one keeps working for the grace period. */
export const rotateKeyCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    withExpiryOptions(
      withScopeOption(
        consumerCommand(parent, 'rotate-key', 'a new key (printed once) in place of one; the old key keeps working for the grace period')
          .option('--name <name>', 'which key (needed when the consumer has keys of several names)')
          .option('--grace <seconds>', 'how long the old key keeps working; 0 revokes it now', wholeNumber(0), DEFAULT_GRACE_SECONDS),
        "the new key's scopes (default: the old key's)",
      ),
    ),
  ).action(async (username: string, options: Options) => {
    const issued = await cli.provisioning(options).rotateKey(username, {
      graceSeconds: options.grace,
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.scope !== undefined ? { scopes: options.scope } : {}),
      ...keyExpiry(options),
    });
    if (options.json) {
      cli.out(JSON.stringify(issued));
      return;
    }
    // keys that expire before the grace would end keep their own end
    const old =
      issued.graceSeconds === 0 || issued.previousKeysUntil === null
        ? 'revoked now'
        : issued.previousKeysExpireFirst
          ? `keep working until ${new Date(issued.previousKeysUntil * 1000).toISOString()}, when they expire anyway`
          : `keep working for ${issued.graceSeconds}s`;
    cli.out(`new API key for ${issued.username} (shown once, store it now): ${issued.key}`);
    cli.out(`key fingerprint: ${issued.fingerprint} (how show names this key)`);
    cli.out(`${issued.previousKeys} previous key(s) ${old}`);
    const terms = describeNewKey(issued);
    if (terms) cli.out(terms);
  });
