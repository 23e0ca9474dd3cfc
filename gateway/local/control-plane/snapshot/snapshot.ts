import { createHash } from 'node:crypto';
import type { Consumer, KeyAuthCredential, Plugin, Reference, Route, Service } from '../db/entities.ts';
import type { Snapshot as StoreView } from '../db/entity-store.ts';

// The document every data-plane node runs: gateway/local/snapshot.schema.json, whose shapes these
// types spell out (a test validates compiled snapshots against the schema).

export const SNAPSHOT_VERSION = 1;

export type SnapshotService = Pick<
  Service,
  'id' | 'name' | 'protocol' | 'host' | 'port' | 'path' | 'retries' | 'connect_timeout' | 'write_timeout' | 'read_timeout' | 'enabled'
>;
export type SnapshotRoute = Pick<
  Route,
  | 'id' | 'name' | 'service' | 'protocols' | 'methods' | 'hosts' | 'paths' | 'headers' | 'strip_path' | 'preserve_host'
  | 'regex_priority' | 'path_handling' | 'https_redirect_status_code' | 'request_buffering' | 'response_buffering' | 'created_at'
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
export type SnapshotPlugin = Pick<
  Plugin,
  'id' | 'name' | 'instance_name' | 'enabled' | 'protocols' | 'route' | 'service' | 'consumer' | 'config'
>;

export interface SnapshotEntities {
  services: SnapshotService[];
  routes: SnapshotRoute[];
  consumers: SnapshotConsumer[];
  keyauth_credentials: SnapshotCredential[];
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
      retries: s.retries,
      connect_timeout: s.connect_timeout,
      write_timeout: s.write_timeout,
      read_timeout: s.read_timeout,
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
      regex_priority: r.regex_priority,
      path_handling: r.path_handling,
      https_redirect_status_code: r.https_redirect_status_code,
      request_buffering: r.request_buffering,
      response_buffering: r.response_buffering,
      created_at: r.created_at,
    })),
    consumers: view.list('consumers').sort(byId).map((c) => ({ id: c.id, username: c.username, custom_id: c.custom_id })),
    keyauth_credentials: view.list('keyauth_credentials').sort(byId).map((k: KeyAuthCredential) => ({
      id: k.id,
      consumer: { id: k.consumer.id },
      key: k.key,
      tags: k.tags,
      expires_at: k.expires_at === null ? null : k.expires_at / 1000,
    })),
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
