import { ProvisioningError } from '../errors.ts';
import type { Page } from './client.ts';

/**
 * The Admin API's entities as the library uses them. Kong's OpenAPI leaves every field optional
 * (it describes request bodies and answers alike); Kong always answers an entity's id, so the
 * answers are checked once here and the rest of the library relies on the fields.
 */
export interface Consumer {
  id: string;
  /** Kong requires a username or a custom_id; a consumer made by hand may lack the username. */
  username: string | null;
  custom_id: string | null;
  tags: string[];
  created_at: number;
}

/** A reference to another entity, as a plugin's `consumer`, `route` and `service` hold it. */
export interface EntityRef {
  id: string;
}

export interface Plugin {
  id: string;
  name: string;
  config: Record<string, unknown>;
  consumer: EntityRef | null;
  route: EntityRef | null;
  service: EntityRef | null;
  tags: string[];
}

export interface KeyAuthCredential {
  id: string;
  /** The key, or its digest once it is stored hashed (api-keys.ts, KEY_HASH_TAG). */
  key: string;
  /** Seconds left; null for a key that never expires (kong/api/endpoints.lua reads with `nulls = true`). */
  ttl: number | null;
  tags: string[];
  created_at: number;
}

/** A consumer's membership of an ACL group (kong/plugins/acl/daos.lua). */
export interface Acl {
  id: string;
  group: string;
}

type Fields = Record<string, unknown>;

const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

function unexpected(what: string, detail: string): ProvisioningError {
  return new ProvisioningError('admin-api-unexpected', `${what}: Kong answered ${detail}`);
}

function fieldsOf(value: unknown, entity: string, what: string): Fields {
  if (!isFields(value)) throw unexpected(what, `something other than a ${entity}`);
  return value;
}

function requiredString(fields: Fields, name: string, entity: string, what: string): string {
  const value = fields[name];
  if (typeof value !== 'string' || value === '') throw unexpected(what, `a ${entity} without ${name}`);
  return value;
}

const optionalString = (value: unknown) => (typeof value === 'string' ? value : null);
const numberOr = <T>(value: unknown, fallback: T) => (typeof value === 'number' ? value : fallback);
const tagsOf = (value: unknown) => (Array.isArray(value) ? value.filter((tag): tag is string => typeof tag === 'string') : []);
const refOf = (value: unknown): EntityRef | null => (isFields(value) && typeof value.id === 'string' ? { id: value.id } : null);

export function consumerFrom(value: unknown, what: string): Consumer {
  const fields = fieldsOf(value, 'consumer', what);
  return {
    id: requiredString(fields, 'id', 'consumer', what),
    username: optionalString(fields.username),
    custom_id: optionalString(fields.custom_id),
    tags: tagsOf(fields.tags),
    created_at: numberOr(fields.created_at, 0),
  };
}

export function pluginFrom(value: unknown, what: string): Plugin {
  const fields = fieldsOf(value, 'plugin', what);
  return {
    id: requiredString(fields, 'id', 'plugin', what),
    name: requiredString(fields, 'name', 'plugin', what),
    config: isFields(fields.config) ? fields.config : {},
    consumer: refOf(fields.consumer),
    route: refOf(fields.route),
    service: refOf(fields.service),
    tags: tagsOf(fields.tags),
  };
}

export function credentialFrom(value: unknown, what: string): KeyAuthCredential {
  const fields = fieldsOf(value, 'key-auth credential', what);
  return {
    id: requiredString(fields, 'id', 'key-auth credential', what),
    key: requiredString(fields, 'key', 'key-auth credential', what),
    ttl: numberOr(fields.ttl, null),
    tags: tagsOf(fields.tags),
    created_at: numberOr(fields.created_at, 0),
  };
}

export function aclFrom(value: unknown, what: string): Acl {
  const fields = fieldsOf(value, 'ACL group', what);
  return { id: requiredString(fields, 'id', 'ACL group', what), group: requiredString(fields, 'group', 'ACL group', what) };
}

/**
 * A page of a listing, each entity narrowed. Read as unknown: Kong's OpenAPI documents some
 * listings (GET /plugins) as one entity where Kong answers a page of them.
 */
export function pageFrom<T>(value: unknown, narrow: (entity: unknown, what: string) => T, what: string): Page<T> {
  if (!isFields(value) || !Array.isArray(value.data)) throw unexpected(what, 'something other than a page');
  return {
    data: value.data.map((entity) => narrow(entity, what)),
    ...(typeof value.offset === 'string' ? { offset: value.offset } : {}),
    next: optionalString(value.next),
  };
}
