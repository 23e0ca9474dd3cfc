import { consumerCommand } from '../cli/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../cli/admin-connection.ts';
import type { CommandModule } from '../cli/context.ts';
import { describeLimits, isoTime } from '../cli/output.ts';

/** `show`: one consumer's plan, limits and key ids; never a key itself. */
export const showCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(consumerCommand(parent, 'show', 'one consumer: plan, limits, key ids and fingerprints (never a key itself)')).action(
    async (username: string, options: ConnectionOptions) => {
      const summary = await cli.provisioning(options).show(username);
      if (options.json) {
        cli.out(JSON.stringify(summary));
        return;
      }
      cli.out(`${summary.username} (${summary.id})`);
      cli.out(`  plan     ${summary.plan ?? '-'}`);
      cli.out(`  limits   ${describeLimits(summary.limits)}`);
      cli.out(`  custom   ${summary.customId ?? '-'}`);
      for (const key of summary.keys) {
        const expiry = key.expiresInSeconds !== null ? `, expires in ${key.expiresInSeconds}s` : '';
        const clear = key.stored === 'plaintext' ? ', stored in clear (run hash-keys)' : '';
        cli.out(`  key      ${key.id} created ${isoTime(key.createdAt)}, fingerprint ${key.fingerprint}${expiry}${clear}`);
      }
      if (summary.keys.length === 0) cli.out('  key      none (revoked)');
    },
  );
