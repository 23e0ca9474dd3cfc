import { withConnectionOptions, type ConnectionOptions } from '../common/admin-connection.ts';
import type { CommandModule } from '../common/context.ts';

/** `hash-keys`: the migration that leaves Kong holding only digests of the managed consumers' keys. */
export const hashKeysCommand: CommandModule = (parent, cli) =>
  withConnectionOptions(
    parent
      .command('hash-keys')
      .description('store every key kept in clear as its SHA-256 digest (progress on stderr)')
      .option('--dry-run', 'say what would be hashed, change nothing'),
  ).action(async (options: ConnectionOptions & { dryRun?: boolean }) => {
    const result = await cli.provisioning(options).hashKeys({ dryRun: options.dryRun === true }, (line) => cli.progress(line));
    if (options.json) {
      cli.out(JSON.stringify(result));
      return;
    }
    const verb = result.dryRun ? 'would hash' : 'hashed';
    const summary = `${verb} ${result.hashed} key(s) of ${result.consumers} consumer(s); ${result.alreadyHashed} already hashed`;
    cli.out(result.dryRun ? `${summary}; nothing changed (--dry-run)` : summary);
  });
