import { AdminApi } from './admin-api/admin-api.ts';
import type { AdminConnection } from './admin-api/client.ts';
import {
  createConsumer,
  deleteConsumer,
  inspectConsumer,
  listConsumers,
  showConsumer,
  type ConsumerDetails,
  type ConsumerFilter,
  type ConsumerSummary,
  type IssuedKey,
  type NewConsumer,
} from './consumers.ts';
import { provisioningContext, type ProvisioningContext } from './context.ts';
import type { KeyOptions, KeySummary } from './key-credentials.ts';
import {
  addKey,
  expiringKeys,
  hashKeys,
  listKeys,
  revokeKeys,
  rotateKey,
  type AddedKey,
  type ExpiringKey,
  type HashKeysResult,
  type RotateKeyOptions,
  type RotatedKey,
} from './keys.ts';
import { setPlan, syncPlans, type PlanAssignment } from './plan-assignment.ts';
import type { Catalogue, Limits, PlanName } from './plans.ts';
import type { ManagedConsumer } from './tags.ts';

/**
 * What an admin does to API consumers, each operation all-or-nothing from the caller's view:
 * when a step fails, what the earlier steps created is undone before the error is thrown. Every
 * failure is a ProvisioningError (errors.ts); nothing is printed. kong.yml's counter settings are
 * read once per instance: make one per command or request.
 */
export class Provisioning {
  private readonly context: ProvisioningContext;

  /** `now` (unix ms, default Date.now): what key expiry instants and times left are reckoned from. */
  constructor(admin: AdminApi, catalogue: Catalogue, now?: () => number) {
    this.context = provisioningContext(admin, catalogue, now);
  }

  /** The Admin API at `connection`. */
  static connect(connection: AdminConnection, catalogue: Catalogue, now?: () => number): Provisioning {
    return new Provisioning(AdminApi.connect(connection), catalogue, now);
  }

  create(input: NewConsumer): Promise<IssuedKey> {
    return createConsumer(this.context, input);
  }

  show(username: string): Promise<ConsumerSummary> {
    return showConsumer(this.context, username);
  }

  /** `show` with the plan plugin it read: what the usage windows are read from. */
  inspect(username: string): Promise<ConsumerDetails> {
    return inspectConsumer(this.context, username);
  }

  list(filter: ConsumerFilter = {}): AsyncGenerator<ManagedConsumer> {
    return listConsumers(this.context, filter);
  }

  setPlan(username: string, plan: PlanName, custom?: Partial<Limits>): Promise<PlanAssignment> {
    return setPlan(this.context, username, plan, custom);
  }

  /** The consumer's keys, newest first (a key rotated out stays listed until its grace ends). */
  listKeys(username: string): Promise<KeySummary[]> {
    return listKeys(this.context, username);
  }

  /** A new key beside the others, under a name the consumer's live keys do not have (`key-exists`). */
  addKey(username: string, options: KeyOptions): Promise<AddedKey> {
    return addKey(this.context, username, options);
  }

  /** A new key for the key of `options.name`; the old one works for `graceSeconds` more (default 24 h). */
  rotateKey(username: string, options?: RotateKeyOptions): Promise<RotatedKey> {
    return rotateKey(this.context, username, options);
  }

  /** Revokes the keys named `selector.name` at once, or without a name every key; resolves with the count. */
  revokeKeys(username: string, selector?: { name?: string }): Promise<number> {
    return revokeKeys(this.context, username, selector);
  }

  /** Keys of managed consumers that expire within `withinSeconds`, soonest first (rotated-out ones left out). */
  expiringKeys(withinSeconds: number): Promise<ExpiringKey[]> {
    return expiringKeys(this.context, withinSeconds);
  }

  hashKeys(options: { dryRun: boolean }, progress: (line: string) => void): Promise<HashKeysResult> {
    return hashKeys(this.context, options, progress);
  }

  delete(username: string): Promise<void> {
    return deleteConsumer(this.context, username);
  }

  syncPlans(
    plans: readonly PlanName[],
    progress: (done: number, plan: PlanName, username: string) => void,
  ): Promise<Record<string, number>> {
    return syncPlans(this.context, plans, progress);
  }
}
