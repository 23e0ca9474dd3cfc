import { defineEntity, type EntityOf } from '../entity.ts';
import * as T from '../typedefs.ts';

/** kong/plugins/acl/daos.lua (3.9.3). */
export const acls = defineEntity({
  name: 'acls',
  primary_key: ['id'],
  cache_key: ['consumer', 'group'],
  schema: T.entity({
    id: T.uuid(),
    created_at: T.autoTimestamp(),
    consumer: T.foreign('consumers', { required: true, on_delete: 'cascade' }),
    group: T.string({ required: true }),
    tags: T.tags(),
  }),
});

export type Acl = EntityOf<typeof acls>;
