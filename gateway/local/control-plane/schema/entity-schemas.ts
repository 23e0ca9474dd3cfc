import { randomUUID } from 'node:crypto';
import { validateRecord, type FieldErrors, type FieldSchema } from './field-schema.ts';
import { hostError, wildcardHostError } from './hosts.ts';

// Entity schemas of Kong 3.9.1 (kong/db/schema/entities/*.lua, key-auth daos.lua), limited to
// the fields the local gateway runs. Fields Kong has but the local gateway cannot honour are
// listed in UNSUPPORTED and refused when set.

const tags: FieldSchema = { type: 'set', elements: { type: 'string', match: /^[\x21-\x2b\x2d-\x2e\x30-\x7e]+$/ } };
const timeout: FieldSchema = { type: 'integer', default: 60000, between: [1, 2147483646] };
const name: FieldSchema = { type: 'string', match: /^[A-Za-z0-9._~-]+$/ };
// Foreign keys arrive as {id} (or, as the Admin API also takes them, by endpoint key).
const foreign = (reference: string): FieldSchema => ({
  type: 'record',
  reference,
  default: null,
  fields: [{ id: { type: 'string' } }, { name: { type: 'string' } }, { username: { type: 'string' } }],
});
type Fields = Array<Record<string, FieldSchema>>;
const id: FieldSchema = { type: 'string', auto: true };
const timestamp: FieldSchema = { type: 'integer', auto: true };
const common: Fields = [{ id }, { created_at: timestamp }, { updated_at: timestamp }];

export const SERVICE_FIELDS: Fields = [
  ...common,
  { name },
  { retries: { type: 'integer', default: 5, between: [0, 32767] } },
  { protocol: { type: 'string', required: true, default: 'http', one_of: ['http', 'https', 'grpc', 'grpcs', 'tcp', 'tls', 'tls_passthrough', 'udp', 'ws', 'wss'] } },
  { host: { type: 'string', required: true, custom: hostError } },
  { port: { type: 'integer', required: true, default: 80, between: [0, 65535] } },
  { path: { type: 'string', match: /^\// } },
  { connect_timeout: timeout },
  { write_timeout: timeout },
  { read_timeout: timeout },
  { tags },
  { client_certificate: foreign('certificates') },
  { tls_verify: { type: 'boolean' } },
  { tls_verify_depth: { type: 'integer' } },
  { ca_certificates: { type: 'array', elements: { type: 'string' } } },
  { enabled: { type: 'boolean', required: true, default: true } },
];

export const ROUTE_FIELDS: Fields = [
  ...common,
  { name },
  { protocols: { type: 'set', required: true, default: ['http', 'https'], elements: { type: 'string', one_of: ['http', 'https', 'grpc', 'grpcs', 'tcp', 'tls', 'tls_passthrough', 'udp', 'ws', 'wss'] } } },
  { methods: { type: 'set', elements: { type: 'string', match: /^[A-Z]+$/ } } },
  { hosts: { type: 'array', elements: { type: 'string', custom: wildcardHostError } } },
  { paths: { type: 'array', elements: { type: 'string', match: /^[/~]/ } } },
  { headers: { type: 'map', keys: { type: 'string' }, values: { type: 'array', elements: { type: 'string' } } } },
  { https_redirect_status_code: { type: 'integer', required: true, default: 426, one_of: [426, 301, 302, 307, 308] } },
  { regex_priority: { type: 'integer', default: 0 } },
  { strip_path: { type: 'boolean', required: true, default: true } },
  { path_handling: { type: 'string', default: 'v0', one_of: ['v0', 'v1'] } },
  { preserve_host: { type: 'boolean', required: true, default: false } },
  { request_buffering: { type: 'boolean', required: true, default: true } },
  { response_buffering: { type: 'boolean', required: true, default: true } },
  { snis: { type: 'set', elements: { type: 'string' } } },
  { sources: { type: 'set', elements: { type: 'record', fields: [{ ip: { type: 'string' } }, { port: { type: 'integer' } }] } } },
  { destinations: { type: 'set', elements: { type: 'record', fields: [{ ip: { type: 'string' } }, { port: { type: 'integer' } }] } } },
  { expression: { type: 'string' } },
  { priority: { type: 'integer' } },
  { tags },
  { service: foreign('services') },
];

export const CONSUMER_FIELDS: Fields = [
  ...common,
  { username: { type: 'string' } },
  { custom_id: { type: 'string' } },
  { tags },
];

export const KEYAUTH_FIELDS: Fields = [
  { id },
  { created_at: timestamp },
  { consumer: foreign('consumers') },
  { key: { type: 'string' } },
  { ttl: { type: 'integer', between: [0, 100000000] } },
  { tags },
];

export const PLUGIN_FIELDS: Fields = [
  ...common,
  { name: { type: 'string', required: true } },
  { instance_name: { type: 'string' } },
  { route: foreign('routes') },
  { service: foreign('services') },
  { consumer: foreign('consumers') },
  { config: { type: 'map' } },
  { protocols: { type: 'set', required: true, default: ['grpc', 'grpcs', 'http', 'https'], elements: { type: 'string' } } },
  { enabled: { type: 'boolean', required: true, default: true } },
  { tags },
];

/** Kong fields the local gateway refuses when they carry a value. */
export const UNSUPPORTED: Record<string, Record<string, string>> = {
  services: {
    client_certificate: 'client certificates are not implemented',
    tls_verify: 'TLS verification settings are not implemented',
    tls_verify_depth: 'TLS verification settings are not implemented',
    ca_certificates: 'CA certificates are not implemented',
  },
  routes: {
    snis: 'SNI matching needs TLS, which the local proxy does not terminate',
    sources: 'stream routes are not implemented',
    destinations: 'stream routes are not implemented',
    expression: 'the expressions router flavor is not implemented (Kong 3.9 defaults to traditional_compatible)',
    priority: 'expression route priority is not implemented',
  },
};

/** Kong's Admin API error bodies (kong/db/errors.lua). */
export interface KongError {
  code: number;
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

export function schemaViolation(errors: FieldErrors): KongError {
  const fields: Record<string, unknown> = {};
  for (const [path, message] of Object.entries(errors)) {
    const parts = path.split('.');
    let node = fields;
    for (const part of parts.slice(0, -1)) {
      node[part] = node[part] ?? {};
      node = node[part] as Record<string, unknown>;
    }
    const last = parts[parts.length - 1]!;
    if (last === '@entity') {
      node['@entity'] = [...((node['@entity'] as string[] | undefined) ?? []), message];
    } else {
      node[last] = message;
    }
  }
  const list = Object.entries(errors).map(([path, message]) => (path.endsWith('@entity') ? message : `${path}: ${message}`));
  return {
    code: 2,
    name: 'schema violation',
    message: list.length === 1 ? `schema violation (${list[0]})` : `${list.length} schema violations (${list.join('; ')})`,
    fields,
  };
}

export function uniqueViolation(field: string, value: string): KongError {
  return {
    code: 5,
    name: 'unique constraint violation',
    message: `UNIQUE violation detected on '{${field}="${value}"}'`,
    fields: { [field]: value },
  };
}

export class KongValidationError extends Error {
  constructor(readonly body: KongError, readonly status = 400) {
    super(body.message);
  }
}

/** Validates the top-level fields of an entity; unknown and unsupported fields are errors. */
export function validateEntity(
  type: keyof typeof ENTITY_FIELDS,
  input: Record<string, unknown>,
  errors: FieldErrors,
  prefix = '',
): Record<string, unknown> {
  const local: FieldErrors = {};
  const value = validateRecord(ENTITY_FIELDS[type], input, '', local);
  for (const [field, reason] of Object.entries(UNSUPPORTED[type] ?? {})) {
    const v = value[field];
    if (v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0)) {
      local[field] = `not supported by the local gateway: ${reason}`;
    }
  }
  for (const [path, message] of Object.entries(local)) errors[prefix + path] = message;
  return value;
}

export const ENTITY_FIELDS = {
  services: SERVICE_FIELDS,
  routes: ROUTE_FIELDS,
  consumers: CONSUMER_FIELDS,
  keyauth_credentials: KEYAUTH_FIELDS,
  plugins: PLUGIN_FIELDS,
} as const;

export const isUuid = (value: unknown): value is string =>
  typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);

export const newId = () => randomUUID();
