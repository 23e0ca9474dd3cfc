// The portal's one door to consumers and keys: the provisioning library the consumers CLI uses
// (packages/provisioning), never the Admin API directly. An account's consumer has named keys,
// each with scopes and an expiry (the library's addKey, rotateKey, revokeKeys by name); every
// operation here takes the signed-in account's own consumer and a key's name within it, so no
// form can reach another account's key. The library checks names, scopes and expiries and
// answers a ProvisioningError (key-options, key-exists, key-not-found) the routes show as a 4xx.
import { keySpec, loadCatalogue, Provisioning, type Catalogue, type KeySummary, type Limits, type PlanName } from '../../packages/provisioning/index.ts';
import type { AdminConnection, Plugin } from '../../packages/provisioning/index.ts';
import type { KeyChanges } from './key-changes.ts';

/** A key handed to its owner once: the portal shows it in one response and keeps nothing of it but the fingerprint in a log line. */
export interface ShownKey {
  key: string;
  fingerprint: string;
  /** Its name within the account (`default` for the sign-up key). */
  name: string;
}

/** Another key for the account, as the dashboard's form gives it (checked by the library). */
export interface NewPortalKey {
  name: string;
  /** None: the key may do everything. */
  scopes: string[];
  /** Undefined: it never expires. */
  expiresInSeconds?: number;
}

export interface KeyOverview {
  consumerId: string;
  /** The consumer's plan plugin: the usage windows are read from it (read once a page). */
  planPlugin: Plugin | undefined;
  plan: PlanName | null;
  limits: Limits | null;
  keys: KeySummary[];
}

/** The plan every portal sign-up starts on; admins move consumers to others with the CLI. */
const SIGN_UP_PLAN: PlanName = 'free';
/** How long the previous key keeps working after a rotation: the CLI's default. */
export const ROTATION_GRACE_SECONDS = 24 * 3600;

/** The Kong consumer's username of an account: stable, unique, and telling an admin where it came from. */
const CONSUMER_PREFIX = 'portal-';
const consumerName = (accountId: string) => `${CONSUMER_PREFIX}${accountId}`;
/** Whether a consumer's username is an account's: what the portal's usage samples keep. */
export const isPortalConsumer = (username: string) => username.startsWith(CONSUMER_PREFIX);

/**
 * An account holds at most `max` live keys, and at most `max` replaced ones in their grace period:
 * a new key needs a free place among the live ones, a rotation among the replaced ones.
 */
export class KeyLimitReached extends Error {
  constructor(
    readonly kind: 'live' | 'replaced',
    readonly max: number,
  ) {
    super(`the account has ${max} ${kind} keys, the most it can have`);
    this.name = 'KeyLimitReached';
  }
}

export class PortalKeys {
  private catalogue: Catalogue | undefined;

  /**
   * `changes`: adds, rotations and revocations of one consumer's keys run one at a time, so the
   * count of `maxKeys` checked in a change still holds when it writes.
   */
  constructor(
    private readonly admin: AdminConnection,
    private readonly changes: KeyChanges,
    private readonly maxKeys: number,
  ) {}

  /** One per request: Provisioning reads kong.yml's counter settings once per instance. */
  private provisioning(): Provisioning {
    this.catalogue ??= loadCatalogue();
    return Provisioning.connect(this.admin, this.catalogue);
  }

  /** The account's consumer on the free plan, linked by custom_id, with its first key. */
  async createConsumer(accountId: string): Promise<ShownKey & { consumer: string }> {
    const issued = await this.provisioning().create({ username: consumerName(accountId), plan: SIGN_UP_PLAN, customId: accountId });
    return { consumer: issued.username, key: issued.key, fingerprint: issued.fingerprint, name: issued.name };
  }

  async deleteConsumer(consumer: string): Promise<void> {
    await this.provisioning().delete(consumer);
  }

  async overview(consumer: string): Promise<KeyOverview> {
    const { summary, planPlugin } = await this.provisioning().inspect(consumer);
    return { consumerId: summary.id, planPlugin, plan: summary.plan, limits: summary.limits, keys: summary.keys };
  }

  /** Throws KeyLimitReached when the consumer holds maxKeys keys of that kind already. */
  private async requireRoom(provisioning: Provisioning, consumer: string, kind: KeyLimitReached['kind']): Promise<void> {
    const keys = await provisioning.listKeys(consumer);
    if (keys.filter((key) => key.replaced === (kind === 'replaced')).length >= this.maxKeys) throw new KeyLimitReached(kind, this.maxKeys);
  }

  /** Another key beside the consumer's others, under a name none of them has, while it has fewer than maxKeys live keys. */
  async add(consumer: string, key: NewPortalKey): Promise<ShownKey> {
    // a form's own mistakes are said before the cap: the key could not be made either way
    keySpec(key, Date.now());
    const added = await this.changes.run(consumer, async () => {
      const provisioning = this.provisioning();
      await this.requireRoom(provisioning, consumer, 'live');
      return provisioning.addKey(consumer, key);
    });
    return { key: added.key, fingerprint: added.fingerprint, name: added.name };
  }

  /**
   * A new key in place of the one named `name`, same scopes and expiry; the old one keeps working
   * for ROTATION_GRACE_SECONDS. Refused while maxKeys replaced keys are in their grace period.
   */
  async rotate(consumer: string, name: string): Promise<ShownKey & { previousKeysUntil: number | null }> {
    const options = { name, graceSeconds: ROTATION_GRACE_SECONDS };
    const rotated = await this.changes.run(consumer, async () => {
      const provisioning = this.provisioning();
      await this.requireRoom(provisioning, consumer, 'replaced');
      return provisioning.rotateKey(consumer, options);
    });
    return { key: rotated.key, fingerprint: rotated.fingerprint, name: rotated.name, previousKeysUntil: rotated.previousKeysUntil };
  }

  /**
   * Revokes the key named `name` at once (and its predecessor still in its grace period);
   * resolves with how many there were and the live key's fingerprint, for the audit line.
   */
  async revoke(consumer: string, name: string): Promise<{ revoked: number; fingerprint: string | undefined }> {
    return this.changes.run(consumer, async () => {
      const provisioning = this.provisioning();
      const named = (await provisioning.listKeys(consumer)).filter((key) => key.name === name);
      const fingerprint = (named.find((key) => !key.replaced) ?? named[0])?.fingerprint;
      return { revoked: await provisioning.revokeKeys(consumer, { name }), fingerprint };
    });
  }

  plans(): Catalogue {
    return (this.catalogue ??= loadCatalogue());
  }
}
