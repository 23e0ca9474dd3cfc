import { type Command, InvalidArgumentError, Option } from 'commander';
import { MAX_KEY_TTL_SECONDS, SCOPES, isScope, type KeyExpiry } from '../../../packages/provisioning/index.ts';
import { parseDuration, parseInstant } from '../../../packages/usage/index.ts';
import { UsageError } from './errors.ts';

/** --scope, --expires-in and --expires-at as parsed: what create, add-key and rotate-key take. */
export interface KeyOptionValues {
  scope?: string[];
  expiresIn?: number;
  expiresAt?: Date;
}

/** `--scope pets:read --scope orders:read` or `--scope pets:read,orders:read`, each checked. */
function scopeList(value: string, previous: string[] | undefined): string[] {
  const scopes = value.split(',').map((scope) => scope.trim());
  const unknown = scopes.find((scope) => !isScope(scope));
  if (unknown !== undefined) throw new InvalidArgumentError(`It must be one of ${SCOPES.join(', ')} (repeat --scope, or separate with commas).`);
  return [...(previous ?? []), ...scopes];
}

function durationSeconds(value: string): number {
  const ms = parseDuration(value);
  if (ms === null || ms % 1000 !== 0) throw new InvalidArgumentError('It must be a duration such as 30d, 12h, 90m or 1w2d.');
  if (ms / 1000 > MAX_KEY_TTL_SECONDS) throw new InvalidArgumentError(`It must be at most ${MAX_KEY_TTL_SECONDS}s (about 3 years, Kong's longest ttl).`);
  return ms / 1000;
}

function instant(value: string): Date {
  const at = parseInstant(value);
  if (at === null) throw new InvalidArgumentError('It must be a date (2030-01-31, UTC midnight) or an ISO time with Z or an offset.');
  return at;
}

export const withScopeOption = (command: Command, what: string) =>
  command.option('--scope <scopes>', `${what}: ${SCOPES.join(', ')}; repeatable or comma-separated`, scopeList);

export const withExpiryOptions = (command: Command) =>
  command
    .addOption(new Option('--expires-in <duration>', 'the key stops working after this long: 30d, 12h, 1w2d').argParser(durationSeconds))
    .addOption(new Option('--expires-at <time>', 'the key stops working at this instant: 2030-01-31 (UTC) or an ISO time').argParser(instant));

/** The expiry the options give; both at once is a usage error. */
export function keyExpiry(options: KeyOptionValues): KeyExpiry {
  if (options.expiresIn !== undefined && options.expiresAt !== undefined) throw new UsageError('give --expires-in or --expires-at, not both');
  if (options.expiresIn !== undefined) return { expiresInSeconds: options.expiresIn };
  if (options.expiresAt !== undefined) return { expiresAt: options.expiresAt };
  return {};
}
