import type { TProperties } from '@sinclair/typebox';
import { defineEntity, type EntityDefinition } from '../entity.ts';
import { hostError } from '../hosts.ts';
import { headerName } from '../plugins/plugin-schema.ts';
import * as T from '../typedefs.ts';

// Entity types of Kong OSS 3.9 the local gateway does not run. Describing a type is not running
// it: `/schemas/{name}` serves their schemas as Kong's (kong/db/schema/entities/*.lua, 3.9.3) so
// that clients reading them work; every write of one is refused (unsupported-routes.ts).

const base = () => ({ id: T.uuid(), created_at: T.autoTimestamp(), updated_at: T.autoTimestamp() });

const hashOn = () => T.string({ default: 'none', one_of: ['none', 'consumer', 'ip', 'header', 'cookie', 'path', 'query_arg', 'uri_capture'] });
const httpStatuses = (statuses: number[]) => T.array(T.integer({ between: [100, 999] }), { default: statuses });
const seconds = (value: number) => T.number({ default: value, between: [0, 65535] });
const oneByte = (value: number) => T.integer({ default: value, between: [0, 255] });
const checkType = () => T.string({ default: 'http', one_of: ['tcp', 'http', 'https', 'grpc', 'grpcs'] });
const header = headerName;

/** upstreams.lua's healthchecks record, as its gen_fields builds it from healthchecks_config. */
const healthchecks = () =>
  T.record({
    active: T.record({
      type: checkType(),
      timeout: seconds(1),
      concurrency: T.integer({ default: 10, between: [1, 2 ** 31] }),
      http_path: T.string({ default: '/', match: /^\// }),
      https_sni: T.string({ required: false }),
      https_verify_certificate: T.boolean({ required: true, default: true }),
      headers: T.map(header(), T.array(T.string()), { required: false }),
      healthy: T.record({ interval: seconds(0), http_statuses: httpStatuses([200, 302]), successes: oneByte(0) }),
      unhealthy: T.record({
        interval: seconds(0),
        http_statuses: httpStatuses([429, 404, 500, 501, 502, 503, 504, 505]),
        tcp_failures: oneByte(0),
        timeouts: oneByte(0),
        http_failures: oneByte(0),
      }),
    }),
    passive: T.record({
      type: checkType(),
      healthy: T.record({
        http_statuses: httpStatuses([200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 306, 307, 308]),
        successes: oneByte(0),
      }),
      unhealthy: T.record({
        http_statuses: httpStatuses([429, 500, 503]),
        tcp_failures: oneByte(0),
        timeouts: oneByte(0),
        http_failures: oneByte(0),
      }),
    }),
    threshold: T.number({ default: 0, between: [0, 100] }),
  });

const upstreams = defineEntity({
  name: 'upstreams',
  primary_key: ['id'],
  endpoint_key: 'name',
  schema: T.entity({
    id: T.uuid(),
    created_at: T.autoTimestamp(),
    name: T.string({ required: true, unique: true }),
    updated_at: T.autoTimestamp(),
    algorithm: T.string({ default: 'round-robin', one_of: ['consistent-hashing', 'least-connections', 'round-robin', 'latency'] }),
    hash_on: hashOn(),
    hash_fallback: hashOn(),
    hash_on_header: header(),
    hash_fallback_header: header(),
    hash_on_cookie: T.string(),
    hash_on_cookie_path: T.string({ default: '/', match: /^\// }),
    hash_on_query_arg: T.string(),
    hash_fallback_query_arg: T.string(),
    hash_on_uri_capture: T.string(),
    hash_fallback_uri_capture: T.string(),
    slots: T.integer({ default: 10000, between: [10, 2 ** 16] }),
    healthchecks: healthchecks(),
    tags: T.tags(),
    host_header: T.string({ custom: hostError }),
    client_certificate: T.foreign('certificates'),
    use_srv_name: T.boolean({ default: false }),
  }),
});

const targets = defineEntity({
  name: 'targets',
  primary_key: ['id'],
  endpoint_key: 'target',
  cache_key: ['upstream', 'target'],
  schema: T.entity({
    ...base(),
    upstream: T.foreign('upstreams', { required: true, on_delete: 'cascade' }),
    target: T.string({ required: true }),
    weight: T.integer({ default: 100, between: [0, 65535] }),
    tags: T.tags(),
  }),
});

const tags = defineEntity({
  name: 'tags',
  primary_key: ['tag'],
  endpoint_key: 'tag',
  schema: T.entity({
    tag: T.string({ match: /^[\x21-\x2b\x2d-\x2e\x30-\x7e]+$/ }),
    entity_name: T.string({ required: true }),
    entity_id: T.string({ required: true, custom: (value) => (T.isUuid(value) ? undefined : 'expected a valid UUID') }),
  }),
});

const vaults = defineEntity({
  name: 'vaults',
  primary_key: ['id'],
  endpoint_key: 'prefix',
  cache_key: ['prefix'],
  schema: T.entity({
    id: T.uuid(),
    prefix: T.string({ required: true, unique: true, match: /^[a-z][a-z\d-]*?[a-z\d]+$/ }),
    name: T.string({ required: true }),
    description: T.string(),
    config: T.abstractRecord(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
    tags: T.tags(),
  }),
});

const keys = defineEntity({
  name: 'keys',
  primary_key: ['id'],
  endpoint_key: 'name',
  cache_key: ['kid', 'set'],
  schema: T.entity({
    id: T.uuid(),
    set: T.foreign('key_sets', { required: false, on_delete: 'cascade' }),
    name: T.string({ required: false, unique: true }),
    kid: T.string({ required: true }),
    jwk: T.string(),
    pem: T.record({ private_key: T.string(), public_key: T.string() }, { required: false }),
    tags: T.tags(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
  }),
});

const keySets = defineEntity({
  name: 'key_sets',
  primary_key: ['id'],
  endpoint_key: 'name',
  schema: T.entity({
    id: T.uuid(),
    name: T.string({ required: false, unique: true }),
    tags: T.tags(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
  }),
});

/** The types Kong OSS 3.9 has and the local gateway refuses to run, by name. */
export const REFUSED_ENTITIES: Readonly<Record<string, EntityDefinition<TProperties>>> = {
  upstreams,
  targets,
  tags,
  vaults,
  keys,
  key_sets: keySets,
};
