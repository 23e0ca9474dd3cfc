import type { FieldErrors } from '../schema/field-schema.ts';
import { pathRegexError, regexError } from '../schema/path-regex.ts';
import type { Consumer, EntityType, EntityTypes, KeyAuthCredential, Plugin, Reference, Route, Service } from './entities.ts';

// One place for what each stored entity looks like: the declarative loader and the Admin API
// both turn validated fields (config/entity-schemas.ts) into entities here, so an entity made
// either way carries every field of Kong 3.9's schema, unset ones as null.

type Fields = Record<string, unknown>;
/** What an entity keeps across updates: its id and creation time. */
export interface Identity {
  id: string;
  created_at: number;
  updated_at: number;
}

const orNull = <T>(value: unknown): T | null => (value === undefined ? null : (value as T | null));

export function serviceFrom(f: Fields, identity: Identity): Service {
  return {
    id: identity.id,
    name: orNull<string>(f.name),
    protocol: f.protocol as Service['protocol'],
    host: f.host as string,
    port: f.port as number,
    path: orNull<string>(f.path),
    retries: f.retries as number,
    connect_timeout: f.connect_timeout as number,
    write_timeout: f.write_timeout as number,
    read_timeout: f.read_timeout as number,
    enabled: f.enabled as boolean,
    tags: orNull<string[]>(f.tags),
    client_certificate: orNull<Reference>(f.client_certificate),
    tls_verify: orNull<boolean>(f.tls_verify),
    tls_verify_depth: orNull<number>(f.tls_verify_depth),
    ca_certificates: orNull<string[]>(f.ca_certificates),
    created_at: identity.created_at,
    updated_at: identity.updated_at,
  };
}

export function routeFrom(f: Fields, service: Reference | null, identity: Identity): Route {
  return {
    id: identity.id,
    name: orNull<string>(f.name),
    service,
    protocols: f.protocols as string[],
    methods: orNull<string[]>(f.methods),
    hosts: orNull<string[]>(f.hosts),
    paths: orNull<string[]>(f.paths),
    headers: orNull<Record<string, string[]>>(f.headers),
    strip_path: f.strip_path as boolean,
    preserve_host: f.preserve_host as boolean,
    regex_priority: f.regex_priority as number,
    path_handling: f.path_handling as Route['path_handling'],
    https_redirect_status_code: f.https_redirect_status_code as number,
    request_buffering: f.request_buffering as boolean,
    response_buffering: f.response_buffering as boolean,
    snis: orNull<string[]>(f.snis),
    sources: orNull<Route['sources']>(f.sources),
    destinations: orNull<Route['destinations']>(f.destinations),
    tags: orNull<string[]>(f.tags),
    created_at: identity.created_at,
    updated_at: identity.updated_at,
  };
}

/**
 * Kong's route entity checks (kong/db/schema/entities/routes.lua) and what the local router must
 * be able to compile: problems are added to `errors`, naming the field.
 */
export function checkRoute(route: Route, errors: FieldErrors): void {
  const set = (v: unknown) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
  if (![route.methods, route.hosts, route.headers, route.paths, route.snis].some(set)) {
    errors['@entity'] = `must set one of 'methods', 'hosts', 'headers', 'paths' when 'protocols' is '${route.protocols.join("', '")}'`;
  }
  for (const [name, values] of Object.entries(route.headers ?? {})) {
    // kong/db/schema/entities/routes.lua: the headers' keys match_none ^[Hh][Oo][Ss][Tt]$.
    if (/^host$/i.test(name)) errors.headers = "cannot contain 'host' header, which must be specified in the 'hosts' attribute";
    // kong/router/transform.lua: a value starting with "~*" is a case-insensitive regex.
    values.forEach((value, i) => {
      const problem = value.startsWith('~*') ? regexError(value.slice(2)) : undefined;
      if (problem) errors[`headers.${name}.${i + 1}`] = problem;
    });
  }
  route.paths?.forEach((path, i) => {
    const problem = path.startsWith('~') ? pathRegexError(path) : undefined;
    if (problem) errors[`paths.${i + 1}`] = problem;
  });
}

export function consumerFrom(f: Fields, identity: Identity): Consumer {
  return {
    id: identity.id,
    username: orNull<string>(f.username),
    custom_id: orNull<string>(f.custom_id),
    tags: orNull<string[]>(f.tags),
    created_at: identity.created_at,
    updated_at: identity.updated_at,
  };
}

/** `nowMs` starts a ttl; `keepExpiry` keeps an existing credential's deadline (a re-sync). */
export function credentialFrom(f: Fields, consumer: Reference, identity: Omit<Identity, 'updated_at'>, nowMs: number, keepExpiry?: number | null): KeyAuthCredential {
  const ttl = typeof f.ttl === 'number' && f.ttl > 0 ? f.ttl : null;
  return {
    id: identity.id,
    consumer: { id: consumer.id },
    key: f.key as string,
    tags: orNull<string[]>(f.tags),
    ttl,
    created_at: identity.created_at,
    expires_at: ttl === null ? null : (keepExpiry ?? nowMs + ttl * 1000),
  };
}

export function pluginFrom(
  f: Fields,
  scope: { consumer: Reference | null; route: Reference | null; service: Reference | null },
  identity: Identity,
): Plugin {
  return {
    id: identity.id,
    name: f.name as string,
    instance_name: orNull<string>(f.instance_name),
    config: f.config as Record<string, unknown>,
    enabled: f.enabled as boolean,
    protocols: f.protocols as string[],
    consumer: scope.consumer,
    route: scope.route,
    service: scope.service,
    tags: orNull<string[]>(f.tags),
    created_at: identity.created_at,
    updated_at: identity.updated_at,
  };
}

/** Kong's key-auth answer: `ttl` is what remains (null without one); the deadline stays inside. */
export function credentialView(credential: KeyAuthCredential, nowMs: number): Omit<KeyAuthCredential, 'expires_at'> {
  const { expires_at, ...rest } = credential;
  return { ...rest, ttl: expires_at === null ? null : Math.max(0, Math.ceil((expires_at - nowMs) / 1000)) };
}

const NULLABLE: Partial<Record<EntityType, readonly string[]>> = {
  services: ['client_certificate', 'tls_verify', 'tls_verify_depth', 'ca_certificates'],
  routes: ['snis', 'sources', 'destinations'],
  keyauth_credentials: ['ttl'],
};

/** Rows written by an older version lack fields added since: they read as null. */
export function upgradeStored<T extends EntityType>(type: T, entity: EntityTypes[T]): EntityTypes[T] {
  const fields = NULLABLE[type];
  if (!fields) return entity;
  const record = entity as unknown as Record<string, unknown>;
  for (const field of fields) if (record[field] === undefined) record[field] = null;
  return entity;
}
