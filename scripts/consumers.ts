import { parseArgs } from 'node:util';
import { AdminApiError, createKongAdminClient } from './kong-admin/client.ts';
import { renderTable } from './lib/cli-table.ts';
import { PLAN_NAMES, isPlanName, loadCatalogue, type Limits, type PlanName } from './lib/plans.ts';
import { Provisioning, type RateLimitPolicy } from './lib/provisioning.ts';

const USAGE = `Usage: npm run consumers -- <command> [options]

Provision API consumers (keys and plans) through Kong's Admin API.

Commands:
  create --username U --plan P [--custom-id X] [--minute N --day N]   a consumer with a new key
  list [--plan P] [--tag T]                                          consumers the scripts manage
  show U                                                             one consumer: plan, limits, keys
  set-plan U --plan P [--minute N --day N]                           change a consumer's plan
  rotate-key U [--grace SECONDS]                                     new key; old keys live on for the grace (default 86400)
  revoke-key U                                                       revoke every key of U now
  delete U                                                           delete U, its keys and its plan
  plans                                                              the plan catalogue (gateway/plans.yaml)
  plans sync [--plan P]                                              push catalogue limits to every consumer of a plan

Options:
  --admin-url URL      Kong Admin API (env KONG_ADMIN_URL, default http://127.0.0.1:8001)
  --admin-header H     extra header for every Admin API call, "Name: value" (env KONG_ADMIN_HEADER),
                       e.g. an admin token when the Admin API sits behind a proxy
  --json               machine-readable output (create and rotate-key print one JSON object)
  -h, --help           this help

Plans: ${PLAN_NAMES.join(', ')} (enterprise takes --minute and --day).
Counters: RATE_LIMIT_POLICY=local (one Kong node, default) or redis (with RATE_LIMIT_REDIS_HOST).
A key is printed only by create and rotate-key: store it then, it is never shown again.`;

class UsageError extends Error {}

const OPTIONS = {
  username: { type: 'string' },
  plan: { type: 'string' },
  'custom-id': { type: 'string' },
  minute: { type: 'string' },
  day: { type: 'string' },
  tag: { type: 'string' },
  grace: { type: 'string' },
  'admin-url': { type: 'string' },
  'admin-header': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

function plan(value: string | undefined, required: boolean): PlanName | undefined {
  if (value === undefined) {
    if (required) throw new UsageError(`--plan is required (${PLAN_NAMES.join(', ')})`);
    return undefined;
  }
  if (!isPlanName(value)) throw new UsageError(`unknown plan ${JSON.stringify(value)}; plans are ${PLAN_NAMES.join(', ')}`);
  return value;
}

function adminHeaders(header: string | undefined): Record<string, string> | undefined {
  if (!header) return undefined;
  const colon = header.indexOf(':');
  if (colon < 1) throw new UsageError('--admin-header must look like "Name: value"');
  return { [header.slice(0, colon).trim()]: header.slice(colon + 1).trim() };
}

function policyFromEnv(env: NodeJS.ProcessEnv): RateLimitPolicy {
  const policy = env.RATE_LIMIT_POLICY ?? 'local';
  if (policy !== 'local' && policy !== 'redis') throw new UsageError('RATE_LIMIT_POLICY must be local or redis');
  return { policy, redisHost: env.RATE_LIMIT_REDIS_HOST, redisPort: env.RATE_LIMIT_REDIS_PORT ? Number(env.RATE_LIMIT_REDIS_PORT) : undefined };
}

const describeLimits = (limits: Limits | null) => (limits ? `${limits.minute}/min, ${limits.day}/day` : '-');

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, out = (line: string) => console.log(line), err = (line: string) => console.error(line)): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    err(`error: ${(error as Error).message.split('\n')[0]} (see --help)`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    out(USAGE);
    return command || values.help ? 0 : 2;
  }
  try {
    const catalogue = loadCatalogue();
    const kong = createKongAdminClient({
      url: values['admin-url'] ?? env.KONG_ADMIN_URL ?? 'http://127.0.0.1:8001',
      headers: adminHeaders(values['admin-header'] ?? env.KONG_ADMIN_HEADER),
    });
    const provisioning = new Provisioning(kong, catalogue, policyFromEnv(env));
    const username = () => {
      const name = rest[0] ?? values.username;
      if (!name) throw new UsageError(`${command} needs a username`);
      return name;
    };
    const custom = () => ({ minute: positiveInteger('minute', values.minute), day: positiveInteger('day', values.day) });

    switch (command) {
      case 'create': {
        if (!values.username) throw new UsageError('create needs --username');
        const issued = await provisioning.create({ username: values.username, plan: plan(values.plan, true)!, customId: values['custom-id'], limits: custom() });
        if (values.json) out(JSON.stringify(issued));
        else out(`created ${issued.username} on plan ${issued.plan} (${describeLimits(issued.limits)})\nAPI key (shown once, store it now): ${issued.key}`);
        return 0;
      }
      case 'list': {
        const rows = [];
        for await (const consumer of provisioning.list({ plan: plan(values.plan, false), tag: values.tag })) {
          rows.push({ username: consumer.username ?? '', plan: (consumer.tags ?? []).find((t) => t.startsWith('plan:'))?.slice(5) ?? '-', custom_id: (consumer.custom_id as string | null | undefined) ?? null, id: consumer.id, created_at: consumer.created_at });
        }
        if (values.json) out(JSON.stringify(rows));
        else out(renderTable(['USERNAME', 'PLAN', 'CUSTOM ID', 'CREATED'], rows.map((r) => [r.username, r.plan, r.custom_id ?? '-', new Date((r.created_at ?? 0) * 1000).toISOString()])));
        return 0;
      }
      case 'show': {
        const summary = await provisioning.show(username());
        if (values.json) out(JSON.stringify(summary));
        else {
          out(`${summary.username} (${summary.id})\n  plan     ${summary.plan ?? '-'}\n  limits   ${describeLimits(summary.limits)}\n  custom   ${summary.customId ?? '-'}`);
          for (const key of summary.keys) out(`  key      ${key.id} created ${new Date(key.createdAt * 1000).toISOString()}${key.expiresInSeconds !== null ? `, expires in ${key.expiresInSeconds}s` : ''}`);
          if (summary.keys.length === 0) out('  key      none (revoked)');
        }
        return 0;
      }
      case 'set-plan': {
        const result = await provisioning.setPlan(username(), plan(values.plan, true)!, custom());
        out(values.json ? JSON.stringify(result) : `${result.username} is now on plan ${result.plan} (${describeLimits(result.limits)})`);
        return 0;
      }
      case 'rotate-key': {
        const grace = positiveInteger('grace', values.grace);
        const issued = await provisioning.rotateKey(username(), grace);
        if (values.json) out(JSON.stringify(issued));
        else out(`new API key for ${issued.username} (shown once, store it now): ${issued.key}\n${issued.previousKeys} previous key(s) ${issued.graceSeconds === 0 ? 'revoked now' : `keep working for ${issued.graceSeconds}s`}`);
        return 0;
      }
      case 'revoke-key': {
        const count = await provisioning.revokeKeys(username());
        out(values.json ? JSON.stringify({ username: username(), revoked: count }) : `revoked ${count} key(s) of ${username()}`);
        return 0;
      }
      case 'delete': {
        await provisioning.delete(username());
        out(values.json ? JSON.stringify({ username: username(), deleted: true }) : `deleted ${username()}`);
        return 0;
      }
      case 'plans': {
        if (rest[0] === 'sync') {
          const only = plan(values.plan, false);
          const counts = await provisioning.syncPlans(only ? [only] : [...PLAN_NAMES], (done, p, name) => err(`synced ${p} #${done}: ${name}`));
          out(values.json ? JSON.stringify(counts) : Object.entries(counts).map(([p, n]) => `${p}: ${n} consumer(s) updated`).join('\n') || 'nothing to sync');
          return 0;
        }
        if (rest[0] !== undefined) throw new UsageError(`unknown plans subcommand ${JSON.stringify(rest[0])}`);
        if (values.json) out(JSON.stringify(catalogue));
        else
          out(renderTable(['PLAN', 'PER MINUTE', 'PER DAY'], PLAN_NAMES.map((name) => {
            const entry = catalogue.plans[name];
            return 'custom' in entry ? [name, 'custom', 'custom'] : [name, String(entry.minute), String(entry.day)];
          })));
        return 0;
      }
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      err(`error: ${error.message} (see --help)`);
      return 2;
    }
    if (error instanceof AdminApiError || error instanceof Error) {
      err(`error: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
