import { createHash } from 'node:crypto';
import type { Snapshot } from '../db/entity-store.ts';

/** The store's state, committed or about to be (a draft compiles to what it would commit). */
type StoreView = Pick<Snapshot, 'list' | 'version'>;
import type { Consumer, ForeignKey as Reference, Plugin, Route, Service } from '../schema/entities/index.ts';

// The document every data-plane node runs: gateway/local/snapshot.schema.json, whose shapes these
// types spell out (a test validates compiled snapshots against the schema).

export const SNAPSHOT_VERSION = 1;

/** Kong's balancer falls back to these when a service leaves them null (kong/runloop/handler.lua:824-829). */
type Runtime<T, K extends keyof T> = Omit<T, K> & { [F in K]: NonNullable<T[F]> };
export type SnapshotService = Runtime<
  Pick<Service, 'id' | 'name' | 'protocol' | 'host' | 'port' | 'path' | 'retries' | 'connect_timeout' | 'write_timeout' | 'read_timeout' | 'enabled'>,
  'retries' | 'connect_timeout' | 'write_timeout' | 'read_timeout'
>;
/** A route's path_handling and regex_priority as Kong's router reads them when null: v0 and 0. */
export type SnapshotRoute = Runtime<
  Pick<
    Route,
    | 'id' | 'name' | 'service' | 'protocols' | 'methods' | 'hosts' | 'paths' | 'headers' | 'strip_path' | 'preserve_host'
    | 'regex_priority' | 'path_handling' | 'https_redirect_status_code' | 'request_buffering' | 'response_buffering' | 'created_at'
  >,
  'regex_priority' | 'path_handling'
>;
export type SnapshotConsumer = Pick<Consumer, 'id' | 'username' | 'custom_id'>;
export interface SnapshotCredential {
  id: string;
  consumer: Reference;
  key: string;
  tags: string[] | null;
  /** Unix seconds; the data plane stops authenticating the key then. */
  expires_at: number | null;
}
export interface SnapshotAcl {
  id: string;
  consumer: Reference;
  group: string;
  tags: string[] | null;
}
export type SnapshotPlugin = Pick<
  Plugin,
  'id' | 'name' | 'instance_name' | 'enabled' | 'protocols' | 'route' | 'service' | 'consumer' | 'config'
>;

export interface SnapshotEntities {
  services: SnapshotService[];
  routes: SnapshotRoute[];
  consumers: SnapshotConsumer[];
  keyauth_credentials: SnapshotCredential[];
  acls: SnapshotAcl[];
  plugins: SnapshotPlugin[];
}

export interface DataPlaneSnapshot extends SnapshotEntities {
  snapshot_version: typeof SNAPSHOT_VERSION;
  config_version: number;
  config_hash: string;
}

/** A compiled snapshot with its serialisation, done once and sent to every node as is. */
export interface CompiledSnapshot {
  version: number;
  hash: string;
  json: string;
}

const ref = (reference: Reference | null): Reference | null => (reference ? { id: reference.id } : null);
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function entitiesOf(view: StoreView): SnapshotEntities {
  return {
    services: view.list('services').sort(byId).map((s) => ({
      id: s.id,
      name: s.name,
      protocol: s.protocol,
      host: s.host,
      port: s.port,
      path: s.path,
      retries: s.retries ?? 5,
      connect_timeout: s.connect_timeout ?? 60000,
      write_timeout: s.write_timeout ?? 60000,
      read_timeout: s.read_timeout ?? 60000,
      enabled: s.enabled,
    })),
    routes: view.list('routes').sort(byId).map((r) => ({
      id: r.id,
      name: r.name,
      service: ref(r.service),
      protocols: r.protocols,
      methods: r.methods,
      hosts: r.hosts,
      paths: r.paths,
      headers: r.headers,
      strip_path: r.strip_path,
      preserve_host: r.preserve_host,
      regex_priority: r.regex_priority ?? 0,
      path_handling: r.path_handling ?? 'v0',
      https_redirect_status_code: r.https_redirect_status_code,
      request_buffering: r.request_buffering,
      response_buffering: r.response_buffering,
      created_at: r.created_at,
    })),
    consumers: view.list('consumers').sort(byId).map((c) => ({ id: c.id, username: c.username, custom_id: c.custom_id })),
    keyauth_credentials: view.list('keyauth_credentials').sort(byId).map((k) => ({
      id: k.id,
      consumer: { id: k.consumer.id },
      key: k.key,
      tags: k.tags,
      expires_at: k.expires_at === null ? null : k.expires_at / 1000,
    })),
    acls: view.list('acls').sort(byId).map((a) => ({ id: a.id, consumer: { id: a.consumer.id }, group: a.group, tags: a.tags })),
    plugins: view.list('plugins').sort(byId).map((p) => ({
      id: p.id,
      name: p.name,
      instance_name: p.instance_name,
      enabled: p.enabled,
      protocols: p.protocols,
      route: ref(p.route),
      service: ref(p.service),
      consumer: ref(p.consumer),
      config: p.config,
    })),
  };
}

/**
 * The store's state as the snapshot data planes run. The hash covers the entities only, so the
 * same configuration always hashes the same, whatever its version.
 */
export function compileSnapshot(view: StoreView): CompiledSnapshot {
  const entities = JSON.stringify(entitiesOf(view));
  const hash = createHash('sha256').update(entities).digest('hex');
  // The entity payload is serialised once: the document is its fields spliced after the header.
  const header = JSON.stringify({ snapshot_version: SNAPSHOT_VERSION, config_version: view.version, config_hash: hash });
  return { version: view.version, hash, json: `${header.slice(0, -1)},${entities.slice(1)}` };
}
