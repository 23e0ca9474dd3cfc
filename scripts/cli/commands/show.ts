import { consumerCommand } from '../common/arguments.ts';
import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';
import { describeExpiry, describeLimits, describeScopes, isoTime } from '../common/output.ts';
import { escapeUnprintable } from '../../../packages/provisioning/index.ts';
import { currentWindows, describeWindows } from '../../../packages/usage/index.ts';

/** `show`: one consumer's plan, limits, current windows and key ids; never a key itself. */
export const showCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(consumerCommand(parent, 'show', 'one consumer: plan, limits, current windows, keys by name, fingerprint, scopes and time left (never a key)')).action(
    async (username: string, options: ConnectionOptions) => {
      const { summary, planPlugin } = await cli.provisioning(options).inspect(username);
      const windows = await currentWindows(planPlugin, summary.id, cli.env);
      if (options.json) {
        cli.out(JSON.stringify({ ...summary, windows }));
        return;
      }
      // names made past the library (the Admin API) may hold line breaks: shown escaped, as in tables
      cli.out(`${escapeUnprintable(summary.username)} (${summary.id})`);
      // a consumer of the CLI's without a plan tag: a create cut short before its last step
      cli.out(`  plan     ${summary.plan ?? '- (unfinished: a create was cut short; delete it and create it again)'}`);
      cli.out(`  limits   ${describeLimits(summary.limits)}`);
      cli.out(`  custom   ${summary.customId === null ? '-' : escapeUnprintable(summary.customId)}`);
      for (const line of describeWindows(windows)) cli.out(line);
      for (const key of summary.keys) {
        const clear = key.stored === 'plaintext' ? ', stored in clear (run hash-keys)' : '';
        const replaced = key.replaced ? ', replaced (grace period)' : '';
        cli.out(
          `  key      ${key.name} fingerprint ${key.fingerprint}, scopes ${describeScopes(key.scopes)}, expires ${describeExpiry(key)}, ` +
            `created ${isoTime(key.createdAt)}, id ${key.id}${replaced}${clear}`,
        );
      }
      if (summary.keys.length === 0) cli.out('  key      none (revoked)');
    },
  );
