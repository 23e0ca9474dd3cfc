import type { Command } from 'commander';
import { loadCatalogue, Provisioning, type Catalogue } from '../../../packages/provisioning/index.ts';
import { adminApi, type ConnectionOptions } from './admin-connection.ts';
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

/**
 * Plan plugins count where kong.yml's fallback rate-limiting plugin counts (Provisioning reads it
 * from the gateway), i.e. where DECK_RATE_LIMIT_POLICY put it. The CLI's own setting is gone: a
 * value left in an environment would be a second source that can disagree.
 */
function refuseOldPolicySetting(env: NodeJS.ProcessEnv): void {
  if (env.RATE_LIMIT_POLICY !== undefined) {
    throw new UsageError("RATE_LIMIT_POLICY is no longer read: plans count where kong.yml's rate-limiting plugin does (DECK_RATE_LIMIT_POLICY); unset it");
  }
}

export function createCliContext(io: CliIo): CliContext {
  let catalogue: Catalogue | undefined;
  const plans = () => (catalogue ??= loadCatalogue());
  return {
    out: (text) => io.stdout.write(`${text}\n`),
    progress: (text) => io.stderr.write(`${text}\n`),
    plans,
    provisioning: (options) => {
      refuseOldPolicySetting(io.env);
      return new Provisioning(adminApi(options, io.env), plans());
    },
    env: io.env,
  };
}

/** A command: registers itself on `parent` with its options and its action, and returns itself. */
export type CommandModule = (parent: Command, cli: CliContext) => Command;
