import { defineEntity, type EntityOf } from '../entity.ts';
import * as T from '../typedefs.ts';

/** kong/plugins/key-auth/daos.lua (3.9.3). */
export const keyauthCredentials = defineEntity({
  name: 'keyauth_credentials',
  primary_key: ['id'],
  endpoint_key: 'key',
  cache_key: ['key'],
  admin_api_name: 'key-auths',
  admin_api_nested_name: 'key-auth',
  ttl: true,
  declarative: { key: [['key']], keyRequired: true, secretKey: true, nestedIn: ['consumer'] },
  snapshot: {
    description:
      "kong/plugins/key-auth/daos.lua. expires_at (unix seconds, may have a fraction) replaces Kong's row ttl: the data plane stops " +
      "authenticating the key at that instant. tags as Kong's row has them: plugins read them through kong.db (the edge plugin tells " +
      'a hashed credential by its key-hash:sha256 tag).',
    fields: ['id', 'consumer', 'key', 'tags', 'expires_at'],
    convert: { expires_at: (ms: number) => ms / 1000 },
  },
  schema: T.entity({
    id: T.uuid(),
    created_at: T.autoTimestamp(),
    consumer: T.foreign('consumers', { required: true, on_delete: 'cascade' }),
    key: T.string({ unique: true, auto: true }),
    tags: T.tags(),
    /** Unix ms after which the key neither authenticates nor is listed (Kong's ttl column). */
    expires_at: T.internal(T.number()),
  }),
});

export type KeyAuthCredential = EntityOf<typeof keyauthCredentials>;
