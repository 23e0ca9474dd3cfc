import type { Consumer } from './admin-api/entities.ts';
import { ProvisioningError } from './errors.ts';
import type { PlanName } from './plans.ts';

/**
 * Tags on everything the library creates. They never include kong.yml's select tag
 * (`animal-store`), so `deck gateway sync` of kong.yml never deletes provisioned consumers.
 */
export const CONSUMER_TAG = 'petstore-consumer';
/** kong.yml's select tag (`_info.select_tags`): what carries it belongs to kong.yml, never to the library. */
export const KONG_YML_SELECT_TAG = 'animal-store';
export const planTag = (plan: PlanName) => `plan:${plan}`;
/**
 * The ACL group every consumer of ours is in: kong.yml's animal-store-access plugin refuses any
 * other consumer on our routes (another team's, on a shared Kong; docs/shared-kong.md).
 */
export const CONSUMER_GROUP = 'animal-store';

/** A consumer the library may act on: one it provisioned, which always has a username. */
export type ManagedConsumer = Consumer & { username: string };

/** The plan a consumer's `plan:<name>` tag names, as written (null without one). */
export const planOf = (consumer: Consumer) => consumer.tags.find((tag) => tag.startsWith('plan:'))?.slice(5) ?? null;

/**
 * Ours: the library's (tag petstore-consumer) or kong.yml's (its select tag). On a shared Kong
 * every other consumer is another team's.
 */
export const isOurs = (consumer: Consumer) => consumer.tags.includes(CONSUMER_TAG) || consumer.tags.includes(KONG_YML_SELECT_TAG);

/** It carries the library's tag and not kong.yml's select tag. */
export function isManaged(consumer: Consumer): consumer is ManagedConsumer {
  return consumer.username !== null && consumer.tags.includes(CONSUMER_TAG) && !consumer.tags.includes(KONG_YML_SELECT_TAG);
}

/** Why the library refuses to touch a consumer it does not manage. */
export function notManaged(username: string, consumer: Consumer): ProvisioningError {
  if (consumer.tags.includes(KONG_YML_SELECT_TAG)) {
    return new ProvisioningError(
      'consumer-not-managed',
      `consumer ${username} belongs to gateway/kong.yml (tag ${KONG_YML_SELECT_TAG}); change it there, not with this CLI`,
    );
  }
  return new ProvisioningError('consumer-not-managed', `consumer ${username} is not managed by this CLI (it lacks the tag ${CONSUMER_TAG})`);
}
