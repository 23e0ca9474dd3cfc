import type { AdminApi } from './admin-api/admin-api.ts';
import { CONSUMER_GROUP, CONSUMER_TAG } from './tags.ts';

/** Puts the consumer in CONSUMER_GROUP; idempotent (a PUT of the group). */
export async function joinGroup(admin: AdminApi, consumerId: string): Promise<void> {
  await admin.putInGroup(consumerId, CONSUMER_GROUP, [CONSUMER_TAG], `putting the consumer in the ACL group ${CONSUMER_GROUP}`);
}

export async function inGroup(admin: AdminApi, consumerId: string): Promise<boolean> {
  for await (const acl of admin.groups(consumerId)) if (acl.group === CONSUMER_GROUP) return true;
  return false;
}
