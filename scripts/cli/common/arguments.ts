import { type Command, InvalidArgumentError, Option } from 'commander';
import { PLAN_NAMES } from '../../../packages/provisioning/index.ts';

/** A parser for a whole number >= `min`; anything else is a usage error naming the option. */
export function wholeNumber(min: number) {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < min) {
      throw new InvalidArgumentError(`It must be a whole number${min > 0 ? ` >= ${min}` : ''}.`);
    }
    return number;
  };
}

export function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('It must not be empty.');
  return value;
}

export const planOption = (description: string) => new Option('--plan <plan>', description).choices(PLAN_NAMES);

/** --minute and --day: the limits an enterprise plan needs. */
export interface LimitOptions {
  minute?: number;
  day?: number;
}

export const withLimitOptions = (command: Command) =>
  command
    .option('--minute <n>', 'requests per minute (enterprise only)', wholeNumber(1))
    .option('--day <n>', 'requests per day (enterprise only)', wholeNumber(1));

export const customLimits = (options: LimitOptions) => ({ minute: options.minute, day: options.day });

/** A subcommand of `parent` that acts on one consumer, named by its username. */
export const consumerCommand = (parent: Command, name: string, description: string) =>
  parent.command(name).description(description).argument('<username>', 'the consumer username', nonEmpty);
