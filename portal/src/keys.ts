// The portal's one door to consumers and keys: the provisioning library the consumers CLI uses
// (packages/provisioning), never the Admin API directly. When the library's named, scoped and
// expiring keys land (issue 31: addKey, listKeys, rotateKey, revokeKey per key), only this file
// changes to offer them.
import { loadCatalogue, Provisioning, type Catalogue, type KeySummary, type Limits, type PlanName } from '../../packages/provisioning/index.ts';
import type { AdminConnection } from '../../packages/provisioning/index.ts';

/** A key handed to its owner once: the portal shows it in one response and keeps nothing of it but the fingerprint in a log line. */
export interface ShownKey {
  key: string;
  fingerprint: string;
}

export interface KeyOverview {
  consumerId: string;
  plan: PlanName | null;
  limits: Limits | null;
  keys: KeySummary[];
}

/** The plan every portal sign-up starts on; admins move consumers to others with the CLI. */
const SIGN_UP_PLAN: PlanName = 'free';
/** How long the previous key keeps working after a rotation: the CLI's default. */
const ROTATION_GRACE_SECONDS = 24 * 3600;

/** The Kong consumer's username of an account: stable, unique, and telling an admin where it came from. */
const consumerName = (accountId: string) => `portal-${accountId}`;

export class PortalKeys {
  private catalogue: Catalogue | undefined;

  constructor(private readonly admin: AdminConnection) {}

  /** One per request: Provisioning reads kong.yml's counter settings once per instance. */
  private provisioning(): Provisioning {
    this.catalogue ??= loadCatalogue();
    return Provisioning.connect(this.admin, this.catalogue);
  }

  /** The account's consumer on the free plan, linked by custom_id, with its first key. */
  async createConsumer(accountId: string): Promise<ShownKey & { consumer: string }> {
    const issued = await this.provisioning().create({ username: consumerName(accountId), plan: SIGN_UP_PLAN, customId: accountId });
    return { consumer: issued.username, key: issued.key, fingerprint: issued.fingerprint };
  }

  async deleteConsumer(consumer: string): Promise<void> {
    await this.provisioning().delete(consumer);
  }

  async overview(consumer: string): Promise<KeyOverview> {
    const summary = await this.provisioning().show(consumer);
    return { consumerId: summary.id, plan: summary.plan, limits: summary.limits, keys: summary.keys };
  }

  /** A new key; the previous ones keep working for ROTATION_GRACE_SECONDS. */
  async rotate(consumer: string): Promise<ShownKey & { previousKeys: number }> {
    const rotated = await this.provisioning().rotateKey(consumer, { graceSeconds: ROTATION_GRACE_SECONDS });
    return { key: rotated.key, fingerprint: rotated.fingerprint, previousKeys: rotated.previousKeys };
  }

  /** Revokes every key of the consumer at once; resolves with how many there were. */
  async revokeAll(consumer: string): Promise<number> {
    return this.provisioning().revokeKeys(consumer);
  }

  plans(): Catalogue {
    return (this.catalogue ??= loadCatalogue());
  }
}
