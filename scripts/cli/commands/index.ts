import type { CommandModule } from '../common/context.ts';
import { addKeyCommand } from './add-key.ts';
import { createCommand } from './create.ts';
import { deleteCommand } from './delete.ts';
import { hashKeysCommand } from './hash-keys.ts';
import { inviteCommand } from './invite.ts';
import { listCommand } from './list.ts';
import { plansCommand } from './plans.ts';
import { revokeKeyCommand } from './revoke-key.ts';
import { rotateKeyCommand } from './rotate-key.ts';
import { setPlanCommand } from './set-plan.ts';
import { showCommand } from './show.ts';
import { usageCommand } from './usage.ts';

/** The CLI's commands, in the order `--help` lists them. A new command is a module and a line here. */
export const COMMANDS: readonly CommandModule[] = [
  createCommand,
  listCommand,
  showCommand,
  setPlanCommand,
  addKeyCommand,
  rotateKeyCommand,
  revokeKeyCommand,
  deleteCommand,
  hashKeysCommand,
  plansCommand,
  usageCommand,
  inviteCommand,
];
