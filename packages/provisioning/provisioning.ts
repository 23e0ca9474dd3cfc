import { AdminApi } from './admin-api/admin-api.ts';
import type { AdminConnection } from './admin-api/client.ts';
import {
  createConsumer,
  deleteConsumer,
  listConsumers,
  showConsumer,
  type ConsumerFilter,
  type ConsumerSummary,
  type IssuedKey,
  type NewConsumer,
} from './consumers.ts';
import { provisioningContext, type ProvisioningContext } from './context.ts';
import { hashKeys, revokeKeys, rotateKey, type HashKeysResult, type RotatedKey } from './keys.ts';
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

  constructor(admin: AdminApi, catalogue: Catalogue) {
    this.context = provisioningContext(admin, catalogue);
  }

  /** The Admin API at `connection`. */
  static connect(connection: AdminConnection, catalogue: Catalogue): Provisioning {
    return new Provisioning(AdminApi.connect(connection), catalogue);
  }

  create(input: NewConsumer): Promise<IssuedKey> {
    return createConsumer(this.context, input);
  }

  show(username: string): Promise<ConsumerSummary> {
    return showConsumer(this.context, username);
  }

  list(filter: ConsumerFilter = {}): AsyncGenerator<ManagedConsumer> {
    return listConsumers(this.context, filter);
  }

  setPlan(username: string, plan: PlanName, custom?: Partial<Limits>): Promise<PlanAssignment> {
    return setPlan(this.context, username, plan, custom);
  }

  rotateKey(username: string, graceSeconds?: number): Promise<RotatedKey> {
    return rotateKey(this.context, username, graceSeconds);
  }

  revokeKeys(username: string): Promise<number> {
    return revokeKeys(this.context, username);
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
