import { InvalidArgumentError } from 'commander';
import type { CommandModule } from '../common/context.ts';
import { inviteByEmail, isAccountEmail } from '../../../portal/src/invitations-entry.ts';

/** As the portal's sign-up form checks it: no control or invisible format character either. */
function email(value: string): string {
  if (!isAccountEmail(value.trim())) throw new InvalidArgumentError('It must be an email address.');
  return value.trim();
}

/** `invite`: a one-time sign-up link of the developer portal, written to its store (docs/portal.md). */
export const inviteCommand: CommandModule = (parent, cli) =>
  parent
    .command('invite')
    .description("a one-time link to sign up on the developer portal (its store: PORTAL_DATA_DIR, else DATA_DIR, else ./data)")
    .argument('<email>', 'who is invited: the account takes this address', email)
    .option('--json', 'machine-readable output')
    .action(async (address: string, options: { json?: boolean }) => {
      const invite = await inviteByEmail(address, cli.env);
      if (options.json) {
        cli.out(JSON.stringify({ email: invite.email, link: invite.link, expiresAt: invite.expiresAt.toISOString() }));
        return;
      }
      cli.out(`invitation for ${invite.email}, one use, until ${invite.expiresAt.toISOString()} (send it privately):`);
      cli.out(invite.link);
    });
