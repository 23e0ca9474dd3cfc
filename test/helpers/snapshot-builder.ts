import { createHash, randomUUID } from 'node:crypto';
import { SNAPSHOT_TYPES, type DataPlaneSnapshot } from '../../gateway/local/data-plane-entry.ts';

// Snapshots for data-plane tests (gateway/local/snapshot.schema.json), entities filled with
// Kong 3.9's defaults (kong/db/schema/entities/*.lua) the way the control plane's compiler fills
// them. Plugin configs are given complete by the test: the data plane trusts them.

// The document's types are the control plane's (typed from the entity definitions' projections).
export type Snapshot = DataPlaneSnapshot;
type SnapshotService = Snapshot['services'][number];
type SnapshotRoute = Snapshot['routes'][number];
type SnapshotConsumer = Snapshot['consumers'][number];
type SnapshotCredential = Snapshot['keyauth_credentials'][number];
type SnapshotAcl = Snapshot['acls'][number];
type SnapshotPlugin = Snapshot['plugins'][number];
type SnapshotCertificate = Snapshot['certificates'][number];
type SnapshotSni = Snapshot['snis'][number];
interface Reference {
  id: string;
}

/** A reference given as an entity name (service, route), username (consumer) or id. */
type Ref = string | Reference | null;

export interface SnapshotInput {
  certificates?: Array<Partial<SnapshotCertificate> & Pick<SnapshotCertificate, 'cert' | 'key'>>;
  snis?: Array<Partial<SnapshotSni> & Pick<SnapshotSni, 'name' | 'certificate'>>;
  services?: Array<Partial<SnapshotService> & { url?: string }>;
  routes?: Array<Partial<Omit<SnapshotRoute, 'service'>> & { service?: Ref }>;
  consumers?: Array<Partial<SnapshotConsumer>>;
  keyauth_credentials?: Array<Partial<Omit<SnapshotCredential, 'consumer'>> & { consumer: Ref }>;
  acls?: Array<Partial<Omit<SnapshotAcl, 'consumer'>> & { consumer: Ref; group: string }>;
  plugins?: Array<Partial<Omit<SnapshotPlugin, 'route' | 'service' | 'consumer'>> & { name: string; route?: Ref; service?: Ref; consumer?: Ref }>;
}

const CREATED_AT = 1_700_000_000;

function serviceFromUrl(url: string): Pick<SnapshotService, 'protocol' | 'host' | 'port' | 'path'> {
  const u = new URL(url);
  const protocol = u.protocol.replace(':', '') as 'http' | 'https';
  return {
    protocol,
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : protocol === 'https' ? 443 : 80,
    path: u.pathname === '/' && !url.endsWith('/') ? null : u.pathname,
  };
}

function resolve(ref: Ref | undefined, byName: Map<string, string>, what: string): Reference | null {
  if (ref === undefined || ref === null) return null;
  if (typeof ref === 'object') return ref;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(ref)) return { id: ref };
  const id = byName.get(ref);
  if (!id) throw new Error(`snapshot builder: no ${what} named ${ref}`);
  return { id };
}

/** MD5 of the entity payload as serialised in the document (the schema's config_hash). */
function configHash(entities: Omit<Snapshot, 'snapshot_version' | 'config_version' | 'config_hash'>): string {
  const payload = JSON.stringify(Object.fromEntries(SNAPSHOT_TYPES.map((type) => [type, entities[type]])));
  return createHash('md5').update(payload).digest('hex');
}

export function buildSnapshot(input: SnapshotInput, configVersion = 1): Snapshot {
  const services: SnapshotService[] = (input.services ?? []).map((s, i) => {
    const { url, ...rest } = s;
    return {
      id: randomUUID(),
      name: null,
      protocol: 'http',
      host: 'localhost',
      port: 80,
      path: null,
      retries: 5,
      connect_timeout: 60000,
      write_timeout: 60000,
      read_timeout: 60000,
      enabled: true,
      created_at: CREATED_AT + i,
      updated_at: CREATED_AT + i,
      tags: null,
      ...(url ? serviceFromUrl(url) : {}),
      ...rest,
    };
  });
  const serviceIds = new Map(services.filter((s) => s.name).map((s) => [s.name!, s.id]));

  const routes: SnapshotRoute[] = (input.routes ?? []).map((r, i) => ({
    id: randomUUID(),
    name: null,
    protocols: ['http', 'https'],
    methods: null,
    hosts: null,
    paths: null,
    headers: null,
    snis: null,
    strip_path: true,
    preserve_host: false,
    regex_priority: 0,
    path_handling: 'v0',
    https_redirect_status_code: 426,
    request_buffering: true,
    response_buffering: true,
    created_at: CREATED_AT + i,
    updated_at: CREATED_AT + i,
    tags: null,
    ...r,
    service: resolve(r.service, serviceIds, 'service'),
  }));
  const routeIds = new Map(routes.filter((r) => r.name).map((r) => [r.name!, r.id]));

  const consumers: SnapshotConsumer[] = (input.consumers ?? []).map((c) => ({ id: randomUUID(), username: null, custom_id: null, ...c }));
  const consumerIds = new Map(consumers.filter((c) => c.username).map((c) => [c.username!, c.id]));

  const keyauth_credentials: SnapshotCredential[] = (input.keyauth_credentials ?? []).map((k) => ({
    id: randomUUID(),
    key: randomUUID(),
    tags: null,
    expires_at: null,
    ...k,
    consumer: resolve(k.consumer, consumerIds, 'consumer')!,
  }));

  const acls: SnapshotAcl[] = (input.acls ?? []).map((a) => ({
    id: randomUUID(),
    tags: null,
    ...a,
    consumer: resolve(a.consumer, consumerIds, 'consumer')!,
  }));

  const plugins: SnapshotPlugin[] = (input.plugins ?? []).map((p) => ({
    id: randomUUID(),
    instance_name: null,
    enabled: true,
    protocols: ['grpc', 'grpcs', 'http', 'https'],
    config: {},
    ...p,
    route: resolve(p.route, routeIds, 'route'),
    service: resolve(p.service, serviceIds, 'service'),
    consumer: resolve(p.consumer, consumerIds, 'consumer'),
  }));

  const certificates: SnapshotCertificate[] = (input.certificates ?? []).map((c) => ({
    id: randomUUID(),
    cert_alt: null,
    key_alt: null,
    ...c,
  }));
  const snis: SnapshotSni[] = (input.snis ?? []).map((s) => ({ id: randomUUID(), ...s }));

  const entities = { certificates, snis, services, routes, consumers, keyauth_credentials, acls, plugins };
  return { snapshot_version: 2, config_version: configVersion, config_hash: configHash(entities), ...entities };
}
