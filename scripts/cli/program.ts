import { Command, CommanderError } from 'commander';
import { createCliContext } from './common/context.ts';
import { EXIT, UsageError } from './common/errors.ts';
import { oneLine, terminalWidth, type CliIo } from './common/output.ts';
import { COMMANDS } from './commands/index.ts';
import { PLAN_NAMES, ProvisioningError, SCOPES, type ProvisioningErrorCode } from '../../packages/provisioning/index.ts';

const AFTER_HELP = `
Plans: ${PLAN_NAMES.join(', ')} (enterprise takes --minute and --day).
Counters: plans count where kong.yml's rate-limiting plugin counts (DECK_RATE_LIMIT_POLICY, read from Kong).
A key is printed only by create, add-key and rotate-key: store it then, it is never shown again
(Kong keeps only its SHA-256 digest; hash-keys migrates keys stored in clear).
Keys have a name, scopes (${SCOPES.join(', ')}; none: everything) and an optional expiry.
Acts only on consumers tagged petstore-consumer, never on what gateway/kong.yml manages.
Exit codes: 0 done, 1 the command failed, 2 a usage error. "<command> --help" for each command.`;

const USAGE_CODES: ReadonlySet<ProvisioningErrorCode> = new Set(['plan-limits', 'key-options', 'key-ambiguous', 'consumer-options']);

/** One line per usage error, pointing at the help of the command that was typed. */
function pointHelp(command: Command, path: string[], io: CliIo): void {
  command.configureOutput({
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
    getOutHelpWidth: () => terminalWidth(io.stdout),
    getErrHelpWidth: () => terminalWidth(io.stderr),
    outputError: (text, write) => write(`${oneLine(text)} (see ${[...path, '--help'].join(' ')})\n`),
  });
  for (const sub of command.commands) pointHelp(sub, [...path, sub.name()], io);
}

/** Options documented as repeatable: each occurrence adds a value. */
const REPEATABLE = new Set(['--scope', '--status-url']);

/**
 * Every other option that takes a value, given twice (`--plan free --plan pro`), is a usage error:
 * Commander would silently keep the last.
 */
function refuseRepeats(command: Command): void {
  for (const option of command.options) {
    if (!(option.required || option.optional) || REPEATABLE.has(option.long ?? '')) continue;
    let seen = false;
    command.on(`option:${option.name()}`, () => {
      if (seen) command.error(`error: option '${option.flags}' given more than once: give it once`, { exitCode: EXIT.usage, code: 'commander.repeatedOption' });
      seen = true;
    });
  }
  for (const sub of command.commands) refuseRepeats(sub);
}

/** The command tree (scripts/cli/commands/); every action writes through `io` and throws to report a failure. */
function program(io: CliIo, onAction: (path: string[]) => void): Command {
  const root = new Command('npm run consumers --')
    .description("Provision API consumers (keys and plans) through Kong's Admin API.")
    .exitOverride()
    .showSuggestionAfterError(false)
    .addHelpText('after', AFTER_HELP)
    .hook('preAction', (_, action) => {
      const path: string[] = [];
      for (let command: Command | null = action; command && command !== root; command = command.parent) path.unshift(command.name());
      onAction(path);
    });
  const cli = createCliContext(io);
  for (const register of COMMANDS) register(root, cli);
  refuseRepeats(root);
  pointHelp(root, [], io);
  return root;
}

/** Runs one command line; resolves with the exit code. Never throws for anything a user can type. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let typed: string[] = [];
  const fail = (message: string, code: number) => {
    io.stderr.write(`error: ${oneLine(message)}${code === EXIT.usage ? ` (see ${[...typed, '--help'].join(' ')})` : ''}\n`);
    return code;
  };
  if (argv.length === 0) return fail('a command is needed', EXIT.usage);
  try {
    await program(io, (path) => (typed = path)).parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    // Commander has already written its one line (or the help) through configureOutput.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (error instanceof UsageError) return fail(error.message, EXIT.usage);
    // Limits that do not fit the plan, a key's bad name, scopes or expiry, a key left unnamed
    // among several and a username or custom id with a control character are the command line's
    // fault: the other codes are the gateway's or its state's.
    if (error instanceof ProvisioningError) return fail(error.message, USAGE_CODES.has(error.code) ? EXIT.usage : EXIT.failed);
    if (error instanceof Error) return fail(error.message, EXIT.failed);
    throw error;
  }
}
