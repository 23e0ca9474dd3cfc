/** The Kong entities the local gateway runs, in the shape Kong's Admin API returns them. */
export interface Reference {
  id: string;
}

export interface Service {
  id: string;
  name: string | null;
  protocol: 'http' | 'https';
  host: string;
  port: number;
  path: string | null;
  retries: number;
  connect_timeout: number;
  write_timeout: number;
  read_timeout: number;
  enabled: boolean;
  tags: string[] | null;
  /** TLS towards the upstream: part of Kong's schema, always null here (refused when set). */
  client_certificate: Reference | null;
  tls_verify: boolean | null;
  tls_verify_depth: number | null;
  ca_certificates: string[] | null;
  created_at: number;
  updated_at: number;
}

export interface Route {
  id: string;
  name: string | null;
  service: Reference | null;
  protocols: string[];
  methods: string[] | null;
  hosts: string[] | null;
  paths: string[] | null;
  headers: Record<string, string[]> | null;
  strip_path: boolean;
  preserve_host: boolean;
  regex_priority: number;
  path_handling: 'v0' | 'v1';
  https_redirect_status_code: number;
  request_buffering: boolean;
  response_buffering: boolean;
  /** SNI and stream matching: part of Kong's schema, always null here (refused when set). */
  snis: string[] | null;
  sources: Array<{ ip?: string; port?: number }> | null;
  destinations: Array<{ ip?: string; port?: number }> | null;
  tags: string[] | null;
  created_at: number;
  updated_at: number;
}

export interface Consumer {
  id: string;
  username: string | null;
  custom_id: string | null;
  tags: string[] | null;
  created_at: number;
  updated_at: number;
}

export interface KeyAuthCredential {
  id: string;
  consumer: Reference;
  key: string;
  tags: string[] | null;
  /** Seconds to live as given at creation; the Admin API reports what remains. */
  ttl: number | null;
  created_at: number;
  /** Internal: unix ms after which the key no longer authenticates (from ttl). */
  expires_at: number | null;
}

export interface Plugin {
  id: string;
  name: string;
  instance_name: string | null;
  config: Record<string, unknown>;
  enabled: boolean;
  protocols: string[];
  consumer: Reference | null;
  route: Reference | null;
  service: Reference | null;
  tags: string[] | null;
  created_at: number;
  updated_at: number;
}

export interface EntityTypes {
  services: Service;
  routes: Route;
  consumers: Consumer;
  keyauth_credentials: KeyAuthCredential;
  plugins: Plugin;
}

export type EntityType = keyof EntityTypes;
export const ENTITY_TYPES: readonly EntityType[] = ['services', 'routes', 'consumers', 'keyauth_credentials', 'plugins'];
