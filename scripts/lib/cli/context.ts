import type { Command } from 'commander';
import { loadCatalogue, type Catalogue } from '../plans.ts';
import { Provisioning, type RateLimitPolicy } from '../provisioning.ts';
import { adminClient, type ConnectionOptions } from './admin-connection.ts';
import { UsageError } from './errors.ts';
import type { CliIo } from './output.ts';

/** What every command's action works with: its output lines and the provisioning it drives. */
export interface CliContext {
  /** One result line on stdout. */
  out(text: string): void;
  /** One progress line on stderr. */
  progress(text: string): void;
  /** gateway/plans.yaml, read once on first use. */
  plans(): Catalogue;
  provisioning(options: ConnectionOptions): Provisioning;
  /** The environment the CLI was given (the only one it reads). */
  env: NodeJS.ProcessEnv;
}

function policyFromEnv(env: NodeJS.ProcessEnv): RateLimitPolicy {
  const policy = env.RATE_LIMIT_POLICY ?? 'local';
  if (policy !== 'local' && policy !== 'redis') throw new UsageError('RATE_LIMIT_POLICY must be local or redis');
  const port = env.RATE_LIMIT_REDIS_PORT;
  if (port !== undefined && !/^\d+$/.test(port)) throw new UsageError('RATE_LIMIT_REDIS_PORT must be a port number');
  return { policy, redisHost: env.RATE_LIMIT_REDIS_HOST, redisPort: port !== undefined ? Number(port) : undefined };
}

export function createCliContext(io: CliIo): CliContext {
  let catalogue: Catalogue | undefined;
  const plans = () => (catalogue ??= loadCatalogue());
  return {
    out: (text) => io.stdout.write(`${text}\n`),
    progress: (text) => io.stderr.write(`${text}\n`),
    plans,
    provisioning: (options) => new Provisioning(adminClient(options, io.env), plans(), policyFromEnv(io.env)),
    env: io.env,
  };
}

/** A command: registers itself on `parent` with its options and its action, and returns itself. */
export type CommandModule = (parent: Command, cli: CliContext) => Command;
