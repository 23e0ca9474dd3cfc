import { defineEntity, type EntityOf } from '../entity.ts';
import { hostError } from '../hosts.ts';
import * as T from '../typedefs.ts';
import { luaNumber } from '../lua-number.ts';
import { parseLuaSocketUrl, pathError } from '../url-path.ts';
import type { FieldErrors } from '../validate.ts';

const timeout = () => T.integer({ default: 60000, between: [1, 2147483646] });

/**
 * The `url` shorthand (kong/db/schema/entities/services.lua:75-106, 3.9.3): protocol, host, port
 * and path from one URL, split by LuaSocket's url.parse; a part it lacks is null (host, path) or
 * Kong's default (protocol http, the protocol's port), and each replaces the field given. What
 * the URL holds is then validated as those fields: `invalid url` is a missing host and a path
 * that does not start with `/` (10-services_routes_spec.lua:894-917).
 *
 * A null url (JSON null; in a form or multipart body an empty one, which arguments.lua:242-253
 * infers as null) passes the shorthand's check, as any null of an optional field
 * (kong/db/schema/init.lua:874-887, 1805-1806), and Kong splits `tostring(ngx.null)`: the text
 * "userdata: NULL" (services.lua:79), whose scheme and path its fields then refuse.
 */
export function serviceUrlFields(given: unknown, errors: FieldErrors): Record<string, unknown> {
  const url = given === null ? 'userdata: NULL' : given;
  if (typeof url !== 'string') {
    errors.url = 'expected a string';
    return {};
  }
  if (url === '') {
    errors.url = 'length must be at least 1';
    return {};
  }
  const parsed = parseLuaSocketUrl(url);
  const port = parsed.port === undefined ? undefined : luaNumber(parsed.port);
  const protocol = parsed.scheme ?? (port === 80 ? 'http' : port === 443 ? 'https' : 'http');
  return {
    protocol,
    host: parsed.host ?? null,
    // a port that is not a number stays text, refused as the port's
    port: port ?? parsed.port ?? (protocol === 'https' ? 443 : 80),
    path: parsed.path ?? null,
  };
}

/** kong/db/schema/entities/services.lua (3.9.3). */
export const services = defineEntity({
  name: 'services',
  primary_key: ['id'],
  endpoint_key: 'name',
  schema: T.entity({
    id: T.uuid(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
    name: T.utf8Name(),
    retries: T.integer({ default: 5, between: [0, 32767] }),
    protocol: T.string({ required: true, default: 'http', one_of: T.PROTOCOLS }),
    host: T.string({ required: true, custom: hostError }),
    port: T.integer({ required: true, default: 80, between: [0, 65535] }),
    path: T.string({ starts_with: '/', custom: pathError }),
    connect_timeout: timeout(),
    write_timeout: timeout(),
    read_timeout: timeout(),
    tags: T.tags(),
    client_certificate: T.foreign('certificates'),
    tls_verify: T.boolean(),
    tls_verify_depth: T.integer(),
    ca_certificates: T.array(T.string()),
    enabled: T.boolean({ required: true, default: true }),
  }),
  shorthands: { url: serviceUrlFields },
  declarative: { key: [['name']], keyRequired: true, topLevel: true },
  snapshot: {
    description:
      'kong/db/schema/entities/services.lua; timeouts in milliseconds. created_at, updated_at (unix seconds) and tags are ' +
      "informational: kong.router.get_service() has them, as Kong's does.",
    fields: [
      'id', 'name', 'protocol', 'host', 'port', 'path', 'retries', 'connect_timeout', 'write_timeout', 'read_timeout', 'enabled',
      'created_at', 'updated_at', 'tags',
    ],
    // Kong's balancer falls back to these when a service leaves them null (kong/runloop/handler.lua:824-829).
    fallback: { retries: 5, connect_timeout: 60000, write_timeout: 60000, read_timeout: 60000 },
    narrow: { protocol: T.string({ required: true, one_of: ['http', 'https'] }) },
  },
  unsupported: {
    client_certificate: 'client certificates are not implemented',
    tls_verify: 'TLS verification settings are not implemented',
    tls_verify_depth: 'TLS verification settings are not implemented',
    ca_certificates: 'CA certificates are not implemented',
  },
});

export type Service = EntityOf<typeof services>;
