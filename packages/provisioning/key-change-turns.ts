import { setTimeout as sleep } from 'node:timers/promises';
import type { KeyAuthCredential } from './admin-api/entities.ts';
import type { ProvisioningContext } from './context.ts';
import { ProvisioningError } from './errors.ts';
import { isReplaced, keyNameOf } from './key-tags.ts';

/**
 * Changes of one key name at once, without a lock (docs/api-keys.md "Changes at the same time").
 * Kong's Admin API has none, so a change reads the consumer's keys, creates its key, then lists
 * them again (`checkAlone`): a live key of the name that is neither its own nor one it read is
 * another change's. Of changes at once at most one finds none and goes on; the others take their
 * key back (the caller's rollback). When each found the other's, none went on: the one whose key
 * had the smallest id waits until the others' keys are gone and runs again (`inTurn`), the others
 * fail with `key-conflict`. Two at once thus make one key, never two.
 */

const POLL_MS = 50;
const WAIT_MS = 1000;
const MAX_ROUNDS = 3;

/** Of the keys of one name: id → whether rotate-key replaced it. */
type KeyState = Map<string, boolean>;

const stateOf = (credentials: readonly KeyAuthCredential[], name: string): KeyState =>
  new Map(credentials.filter((credential) => keyNameOf(credential) === name).map((credential) => [credential.id, isReplaced(credential)]));

/** Another change's key was there: what this change had read, and the other keys it saw. */
class ConcurrentChange extends Error {
  constructor(
    readonly consumerId: string,
    readonly keyName: string,
    readonly read: KeyState,
    readonly rivals: ReadonlySet<string>,
    /** Its key's id is below every rival's: the one change that runs again. */
    readonly first: boolean,
  ) {
    super(`another change of the key ${keyName} ran at the same time`);
  }
}

/** After creating `created`: throws ConcurrentChange when another change's key of the name is there. */
export async function checkAlone(
  { admin }: ProvisioningContext,
  consumerId: string,
  name: string,
  before: readonly KeyAuthCredential[],
  created: KeyAuthCredential,
): Promise<void> {
  const read = stateOf(before, name);
  const isRival = (credential: KeyAuthCredential) =>
    credential.id !== created.id && !read.has(credential.id) && !isReplaced(credential) && keyNameOf(credential) === name;
  const rivals = (await admin.keys(consumerId)).filter(isRival).map((credential) => credential.id);
  if (rivals.length > 0) throw new ConcurrentChange(consumerId, name, read, new Set(rivals), rivals.every((id) => created.id < id));
}

/** Runs `change` (read, create, checkAlone, finish); settles a ConcurrentChange as the module says. */
export async function inTurn<T>(context: ProvisioningContext, username: string, change: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round += 1) {
    try {
      return await change();
    } catch (error) {
      if (!(error instanceof ConcurrentChange)) throw error;
      if (!error.first || round === MAX_ROUNDS || !(await othersWithdrew(context, error))) {
        throw new ProvisioningError(
          'key-conflict',
          `another change of ${username}'s key ${error.keyName} ran at the same time; this one changed nothing: run it again`,
        );
      }
    }
  }
}

/**
 * Whether the keys of the name are back to what the change read (the rivals took theirs back):
 * polled until then, until something else changed (a rival went on), or for WAIT_MS at most.
 */
async function othersWithdrew({ admin }: ProvisioningContext, conflict: ConcurrentChange): Promise<boolean> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const now = stateOf(await admin.keys(conflict.consumerId), conflict.keyName);
    const moved =
      [...conflict.read.keys()].some((id) => !now.has(id)) ||
      [...now].some(([id, replaced]) => !conflict.rivals.has(id) && conflict.read.get(id) !== replaced);
    if (moved) return false;
    if (![...now.keys()].some((id) => conflict.rivals.has(id))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}
