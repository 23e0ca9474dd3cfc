import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { AdminApiError, createKongAdminClient } from '../kong-admin/client.ts';
import { renderTable } from './cli-table.ts';
import { PLAN_NAMES, PlanLimitsError, loadCatalogue, type Catalogue, type Limits, type PlanName } from './plans.ts';
import { Provisioning, type RateLimitPolicy } from './provisioning.ts';

/** Where the CLI reads its environment and writes its output; the script passes the process's. */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

/** Exit codes: 0 done, 1 the command failed (Admin API, network, state), 2 the command line is wrong. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8001';
const DEFAULT_GRACE_SECONDS = 86400;

/** A command line the CLI cannot run: exit 2, nothing sent to the Admin API. */
class UsageError extends Error {}

interface ConnectionOptions {
  adminUrl?: string;
  adminHeader?: string;
  json?: boolean;
}

function wholeNumber(min: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < min) {
      throw new InvalidArgumentError(`It must be a whole number${min > 0 ? ` >= ${min}` : ''}.`);
    }
    return number;
  };
}

function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('It must not be empty.');
  return value;
}

function adminUrl(options: ConnectionOptions, env: NodeJS.ProcessEnv): string {
  const [value, source] =
    options.adminUrl !== undefined ? [options.adminUrl, '--admin-url'] : [env.KONG_ADMIN_URL ?? DEFAULT_ADMIN_URL, 'KONG_ADMIN_URL'];
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new UsageError(`${source} must be an http(s) URL such as ${DEFAULT_ADMIN_URL}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function adminHeaders(options: ConnectionOptions, env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  const [header, source] =
    options.adminHeader !== undefined ? [options.adminHeader, '--admin-header'] : [env.KONG_ADMIN_HEADER, 'KONG_ADMIN_HEADER'];
  if (!header) return undefined;
  const colon = header.indexOf(':');
  const name = header.slice(0, colon).trim();
  if (colon < 1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`${source} must look like "Name: value"`);
  return { [name]: header.slice(colon + 1).trim() };
}

function policyFromEnv(env: NodeJS.ProcessEnv): RateLimitPolicy {
  const policy = env.RATE_LIMIT_POLICY ?? 'local';
  if (policy !== 'local' && policy !== 'redis') throw new UsageError('RATE_LIMIT_POLICY must be local or redis');
  const port = env.RATE_LIMIT_REDIS_PORT;
  if (port !== undefined && !/^\d+$/.test(port)) throw new UsageError('RATE_LIMIT_REDIS_PORT must be a port number');
  return { policy, redisHost: env.RATE_LIMIT_REDIS_HOST, redisPort: port !== undefined ? Number(port) : undefined };
}

const terminalWidth = (stream: CliIo['stdout']) => ((stream as NodeJS.WriteStream).isTTY ? (stream as NodeJS.WriteStream).columns : 80);
const oneLine = (text: string) => text.trim().replace(/\s*\n\s*/g, ' ');
const describeLimits = (limits: Limits | null) => (limits ? `${limits.minute}/min, ${limits.day}/day` : '-');
const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString();

const AFTER_HELP = `
Plans: ${PLAN_NAMES.join(', ')} (enterprise takes --minute and --day).
Counters: RATE_LIMIT_POLICY=local (one Kong node, default) or redis (with RATE_LIMIT_REDIS_HOST).
A key is printed only by create and rotate-key: store it then, it is never shown again.
Acts only on consumers tagged petstore-consumer, never on what gateway/kong.yml manages.
Exit codes: 0 done, 1 the command failed, 2 a usage error. "<command> --help" for each command.`;

/** The command tree; every action writes through `io` and throws to report a failure. */
function program(io: CliIo, onAction: (path: string[]) => void): Command {
  const out = (text: string) => io.stdout.write(`${text}\n`);
  let catalogue: Catalogue | undefined;
  const plans = () => (catalogue ??= loadCatalogue());
  const provisioning = (options: ConnectionOptions) =>
    new Provisioning(
      createKongAdminClient({ url: adminUrl(options, io.env), headers: adminHeaders(options, io.env) }),
      plans(),
      policyFromEnv(io.env),
    );

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

  const planOption = (description: string) => new Option('--plan <plan>', description).choices(PLAN_NAMES);
  const limitOptions = (command: Command) =>
    command
      .option('--minute <n>', 'requests per minute (enterprise only)', wholeNumber(1))
      .option('--day <n>', 'requests per day (enterprise only)', wholeNumber(1));
  const connectionOptions = (command: Command) =>
    command
      .option('--admin-url <url>', `Kong Admin API (env KONG_ADMIN_URL, default ${DEFAULT_ADMIN_URL})`)
      .option(
        '--admin-header <header>',
        'extra header for every Admin API call, "Name: value" (env KONG_ADMIN_HEADER), e.g. an admin token',
      )
      .option('--json', 'machine-readable output');
  const custom = (options: { minute?: number; day?: number }) => ({ minute: options.minute, day: options.day });

  const create = root
    .command('create')
    .description('a consumer with a new key (printed once)')
    .requiredOption('--username <name>', 'the consumer username', nonEmpty)
    .addOption(planOption('the plan').makeOptionMandatory())
    .option('--custom-id <id>', "the consumer's custom_id, e.g. your own customer id", nonEmpty);
  connectionOptions(limitOptions(create)).action(
    async (options: ConnectionOptions & { username: string; plan: PlanName; customId?: string; minute?: number; day?: number }) => {
      const issued = await provisioning(options).create({
        username: options.username,
        plan: options.plan,
        customId: options.customId,
        limits: custom(options),
      });
      if (options.json) {
        out(JSON.stringify(issued));
        return;
      }
      out(`created ${issued.username} on plan ${issued.plan} (${describeLimits(issued.limits)})`);
      out(`API key (shown once, store it now): ${issued.key}`);
    },
  );

  const list = root
    .command('list')
    .description('consumers the CLI manages')
    .addOption(planOption('only consumers of this plan'))
    .option('--tag <tag>', 'only consumers that also carry this tag');
  connectionOptions(list).action(async (options: ConnectionOptions & { plan?: PlanName; tag?: string }) => {
    const rows = [];
    for await (const consumer of provisioning(options).list({ plan: options.plan, tag: options.tag })) {
      const plan = (consumer.tags ?? []).find((t) => t.startsWith('plan:'))?.slice(5) ?? '-';
      rows.push({
        username: consumer.username ?? '',
        plan,
        custom_id: (consumer.custom_id as string | null | undefined) ?? null,
        id: consumer.id,
        created_at: consumer.created_at,
      });
    }
    if (options.json) out(JSON.stringify(rows));
    else
      out(
        renderTable(
          ['USERNAME', 'PLAN', 'CUSTOM ID', 'CREATED'],
          rows.map((r) => [r.username, r.plan, r.custom_id ?? '-', isoTime(r.created_at ?? 0)]),
        ),
      );
  });

  const show = root
    .command('show')
    .description('one consumer: plan, limits, key ids (never a key itself)')
    .argument('<username>', 'the consumer username', nonEmpty);
  connectionOptions(show).action(async (username: string, options: ConnectionOptions) => {
    const summary = await provisioning(options).show(username);
    if (options.json) {
      out(JSON.stringify(summary));
      return;
    }
    out(`${summary.username} (${summary.id})`);
    out(`  plan     ${summary.plan ?? '-'}`);
    out(`  limits   ${describeLimits(summary.limits)}`);
    out(`  custom   ${summary.customId ?? '-'}`);
    for (const key of summary.keys) {
      const expiry = key.expiresInSeconds !== null ? `, expires in ${key.expiresInSeconds}s` : '';
      out(`  key      ${key.id} created ${isoTime(key.createdAt)}${expiry}`);
    }
    if (summary.keys.length === 0) out('  key      none (revoked)');
  });

  const setPlan = root
    .command('set-plan')
    .description("change a consumer's plan; the gateway applies it from the next request")
    .argument('<username>', 'the consumer username', nonEmpty)
    .addOption(planOption('the new plan').makeOptionMandatory());
  connectionOptions(limitOptions(setPlan)).action(
    async (username: string, options: ConnectionOptions & { plan: PlanName; minute?: number; day?: number }) => {
      const result = await provisioning(options).setPlan(username, options.plan, custom(options));
      out(options.json ? JSON.stringify(result) : `${result.username} is now on plan ${result.plan} (${describeLimits(result.limits)})`);
    },
  );

  const rotateKey = root
    .command('rotate-key')
    .description('a new key (printed once); the old keys keep working for the grace period')
    .argument('<username>', 'the consumer username', nonEmpty)
    .option('--grace <seconds>', 'how long the old keys keep working; 0 revokes them now', wholeNumber(0), DEFAULT_GRACE_SECONDS);
  connectionOptions(rotateKey).action(async (username: string, options: ConnectionOptions & { grace: number }) => {
    const issued = await provisioning(options).rotateKey(username, options.grace);
    if (options.json) {
      out(JSON.stringify(issued));
      return;
    }
    const old = issued.graceSeconds === 0 ? 'revoked now' : `keep working for ${issued.graceSeconds}s`;
    out(`new API key for ${issued.username} (shown once, store it now): ${issued.key}\n${issued.previousKeys} previous key(s) ${old}`);
  });

  const revokeKey = root
    .command('revoke-key')
    .description('revoke every key of the consumer now')
    .argument('<username>', 'the consumer username', nonEmpty);
  connectionOptions(revokeKey).action(async (username: string, options: ConnectionOptions) => {
    const revoked = await provisioning(options).revokeKeys(username);
    out(options.json ? JSON.stringify({ username, revoked }) : `revoked ${revoked} key(s) of ${username}`);
  });

  const remove = root
    .command('delete')
    .description('delete the consumer, its keys and its plan')
    .argument('<username>', 'the consumer username', nonEmpty);
  connectionOptions(remove).action(async (username: string, options: ConnectionOptions) => {
    await provisioning(options).delete(username);
    out(options.json ? JSON.stringify({ username, deleted: true }) : `deleted ${username}`);
  });

  const catalogueCommand = root
    .command('plans')
    .description('the plan catalogue (gateway/plans.yaml); "plans sync" pushes it to the consumers')
    .option('--json', 'machine-readable output')
    .action((options: { json?: boolean }) => {
      if (options.json) {
        out(JSON.stringify(plans()));
        return;
      }
      const rows = PLAN_NAMES.map((name) => {
        const entry = plans().plans[name];
        return 'custom' in entry ? [name, 'custom', 'custom'] : [name, String(entry.minute), String(entry.day)];
      });
      out(renderTable(['PLAN', 'PER MINUTE', 'PER DAY'], rows));
    });
  const sync = catalogueCommand
    .command('sync')
    .description("push the catalogue's limits to every consumer of a plan (progress on stderr)")
    .addOption(planOption('only this plan'));
  connectionOptions(sync).action(async (options: ConnectionOptions & { plan?: PlanName }) => {
    const only = options.plan ? [options.plan] : [...PLAN_NAMES];
    const counts = await provisioning(options).syncPlans(only, (done, plan, name) => io.stderr.write(`synced ${plan} #${done}: ${name}\n`));
    out(
      options.json
        ? JSON.stringify(counts)
        : Object.entries(counts)
            .map(([plan, n]) => `${plan}: ${n} consumer(s) updated`)
            .join('\n') || 'nothing to sync',
    );
  });

  // One line per usage error, pointing at the help of the command that was typed.
  const pointHelp = (command: Command, path: string[]) => {
    command.configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      getOutHelpWidth: () => terminalWidth(io.stdout),
      getErrHelpWidth: () => terminalWidth(io.stderr),
      outputError: (text, write) => write(`${oneLine(text)} (see ${[...path, '--help'].join(' ')})\n`),
    });
    for (const sub of command.commands) pointHelp(sub, [...path, sub.name()]);
  };
  pointHelp(root, []);
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
    if (error instanceof UsageError || error instanceof PlanLimitsError) return fail(error.message, EXIT.usage);
    if (error instanceof AdminApiError || error instanceof Error) return fail(error.message, EXIT.failed);
    throw error;
  }
}
