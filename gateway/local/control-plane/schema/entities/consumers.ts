import { defineEntity, type EntityOf } from '../entity.ts';
import * as T from '../typedefs.ts';

/** kong/db/schema/entities/consumers.lua (3.9.3). */
export const consumers = defineEntity({
  name: 'consumers',
  primary_key: ['id'],
  endpoint_key: 'username',
  schema: T.entity({
    id: T.uuid(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
    username: T.string({ unique: true }),
    custom_id: T.string({ unique: true }),
    tags: T.tags(),
  }),
  declarative: { key: [['username'], ['custom_id']], topLevel: true },
  snapshot: { fields: ['id', 'username', 'custom_id'] },
  check(consumer, errors) {
    // entity_checks: at_least_one_of = { "custom_id", "username" }
    if (consumer.username === null && consumer.custom_id === null) {
      errors['@entity'] = "at least one of these fields must be non-empty: 'custom_id', 'username'";
    }
  },
});

export type Consumer = EntityOf<typeof consumers>;
