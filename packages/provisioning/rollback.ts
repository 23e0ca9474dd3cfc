import { ProvisioningError } from './errors.ts';

export type Undo = () => Promise<unknown>;

/**
 * Runs `steps` all-or-nothing from the caller's view: each step that changes the gateway
 * registers how to undo it, and when a later step fails, the undos run newest first before the
 * error is rethrown. When an undo fails too, the error says so (code `rollback-failed`).
 */
export async function withRollback<T>(steps: (onRollback: (undo: Undo) => void) => Promise<T>): Promise<T> {
  const undo: Undo[] = [];
  try {
    return await steps((step) => undo.unshift(step));
  } catch (error) {
    const failures: string[] = [];
    for (const step of undo) {
      try {
        await step();
      } catch (rollbackError) {
        failures.push((rollbackError as Error).message);
      }
    }
    if (failures.length > 0) {
      throw new ProvisioningError(
        'rollback-failed',
        `${(error as Error).message}; rolling back also failed: ${failures.join('; ')} (check the consumer by hand)`,
      );
    }
    throw error;
  }
}

/**
 * The undo of a write registered before it is sent, so that a write whose answer was lost (the
 * connection closed after Kong applied it) is undone too: a 404 means there is nothing to undo
 * (the write never arrived; Kong answers 404 for a nested entity that is not there,
 * kong/api/endpoints.lua:675-730 at 3.9.3).
 */
export const unlessGone =
  (undo: Undo): Undo =>
  async () => {
    try {
      await undo();
    } catch (error) {
      if (!(error instanceof ProvisioningError && error.status === 404)) throw error;
    }
  };
