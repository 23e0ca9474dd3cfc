import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type SignUpMode = 'open' | 'invite';

/** The portal's settings from the environment; each is documented in docs/portal.md. */
export interface PortalConfig {
  host: string;
  port: number;
  dataDir: string;
  /** PORTAL_DATABASE_URL: the store on PostgreSQL, shared by every replica; unset: SQLite in dataDir. */
  databaseUrl?: string;
  signUp: SignUpMode;
  /** Where browsers reach the portal's origin (the gateway's proxy): invitation links start here. */
  publicUrl: string;
  /** The public API's base URL, shown beside the key. */
  apiUrl: string;
  /** KONG_ADMIN_URL without its credentials, if it had any: they are in adminHeaders. */
  adminUrl: string;
  /** `Authorization: Basic …` from KONG_ADMIN_URL's user:password@ (an Admin API behind a proxy's Basic auth). */
  adminHeaders?: Record<string, string>;
  /** The data plane's Status API(s) for request totals; empty: none. */
  statusUrls: URL[];
  /** PORTAL_PROMETHEUS_URL: the usage charts' source (compose); unset, the portal samples statusUrls itself. */
  prometheusUrl?: URL;
  /** PORTAL_USAGE_SAMPLE_SECONDS (default 60): how often it samples them, without Prometheus. */
  usageSampleSeconds?: number;
  /**
   * Signs the cookies: PORTAL_COOKIE_SECRET or, unset, one made once and kept in the store (a
   * file in dataDir for SQLite; undefined here on PostgreSQL, where startPortal reads it from the
   * database every replica shares).
   */
  cookieSecret?: string;
  /** Where accounts ask for another plan (PORTAL_SUPPORT_EMAIL); unset: "your Animal Store contact". */
  supportEmail?: string;
  /** PORTAL_KEYS_PER_ACCOUNT (default DEFAULT_KEYS_PER_ACCOUNT): the live keys an account may hold, and the replaced ones. */
  keysPerAccount?: number;
}

export const DEFAULT_KEYS_PER_ACCOUNT = 10;

/** Plain enough for a mailto: link and a page: no spaces, quotes, angle brackets or query characters. */
const EMAIL_PATTERN = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/;

function supportEmail(value: string | undefined): Pick<PortalConfig, 'supportEmail'> {
  if (value === undefined || value === '') return {};
  if (!EMAIL_PATTERN.test(value)) throw new Error(`PORTAL_SUPPORT_EMAIL must be an email address, got ${JSON.stringify(value)}`);
  return { supportEmail: value };
}

function url(value: string, name: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:') {
    // a URL's user:password@ is a secret: not echoed
    const got = value.includes('@') ? 'got a value with "@" (not shown: it may hold a password)' : `got ${JSON.stringify(value)}`;
    throw new Error(`${name} must be an http(s) URL, ${got}`);
  }
  return value.replace(/\/+$/, '');
}

/**
 * KONG_ADMIN_URL. fetch refuses a URL with credentials (its error quotes the URL, password and
 * all), so an Admin API behind a proxy's Basic auth has them sent as an Authorization header.
 */
function adminConnection(value: string): Pick<PortalConfig, 'adminUrl' | 'adminHeaders'> {
  const parsed = new URL(url(value, 'KONG_ADMIN_URL'));
  if (!parsed.username && !parsed.password) return { adminUrl: parsed.href.replace(/\/+$/, '') };
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { adminUrl: parsed.href.replace(/\/+$/, ''), adminHeaders: { Authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } };
}

/**
 * PORTAL_COOKIE_SECRET; unset, on SQLite the secret kept in `<dataDir>/portal-cookie-secret`
 * (0600), made on first start, and on PostgreSQL undefined: the store's (db/settings.ts).
 */
function cookieSecret(env: NodeJS.ProcessEnv, dataDir: string, onPostgres: boolean): string | undefined {
  const given = env.PORTAL_COOKIE_SECRET;
  if (given !== undefined && given !== '') {
    if (given.length < 32) throw new Error('PORTAL_COOKIE_SECRET must have at least 32 characters');
    return given;
  }
  if (onPostgres) return undefined;
  const file = join(dataDir, 'portal-cookie-secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(32).toString('base64url');
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  }
}

/** PORTAL_DATABASE_URL: unset or empty is SQLite; anything but postgres(ql):// would split the replicas across files. */
function databaseUrl(value: string | undefined): Pick<PortalConfig, 'databaseUrl'> {
  if (value === undefined || value === '') return {};
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw new Error(`PORTAL_DATABASE_URL must be a postgres:// or postgresql:// URL, got one starting ${JSON.stringify(value.split(':')[0])}`);
  }
  return { databaseUrl: value };
}

/** Where the portal's store is and where browsers reach it: all an invitation needs (invitations.ts). */
export function readStoreSettings(env: NodeJS.ProcessEnv): Pick<PortalConfig, 'dataDir' | 'databaseUrl' | 'publicUrl'> {
  return {
    dataDir: env.PORTAL_DATA_DIR ?? env.DATA_DIR ?? './data',
    ...databaseUrl(env.PORTAL_DATABASE_URL),
    publicUrl: url(env.PORTAL_PUBLIC_URL ?? 'http://127.0.0.1:8000', 'PORTAL_PUBLIC_URL'),
  };
}

/** PORTAL_PROMETHEUS_URL and PORTAL_USAGE_SAMPLE_SECONDS: where the usage charts come from. */
function chartSettings(env: NodeJS.ProcessEnv): Pick<PortalConfig, 'prometheusUrl' | 'usageSampleSeconds'> {
  const seconds = Number(env.PORTAL_USAGE_SAMPLE_SECONDS || 60);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) {
    throw new Error(`PORTAL_USAGE_SAMPLE_SECONDS must be a whole number of seconds from 1 to 3600, got ${JSON.stringify(env.PORTAL_USAGE_SAMPLE_SECONDS)}`);
  }
  const prometheus = env.PORTAL_PROMETHEUS_URL;
  return { usageSampleSeconds: seconds, ...(prometheus ? { prometheusUrl: new URL(url(prometheus, 'PORTAL_PROMETHEUS_URL')) } : {}) };
}

function keysPerAccount(value: string | undefined): number {
  const keys = Number(value || DEFAULT_KEYS_PER_ACCOUNT);
  if (!Number.isInteger(keys) || keys < 1 || keys > 100) {
    throw new Error(`PORTAL_KEYS_PER_ACCOUNT must be a whole number from 1 to 100, got ${JSON.stringify(value)}`);
  }
  return keys;
}

/** PORTAL_HOST and PORTAL_PORT (default 127.0.0.1:3001), where the portal listens. */
export function readPortalListen(env: NodeJS.ProcessEnv): { host: string; port: number } {
  const port = Number(env.PORTAL_PORT ?? 3001);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORTAL_PORT must be a port number, got ${JSON.stringify(env.PORTAL_PORT)}`);
  return { host: env.PORTAL_HOST ?? '127.0.0.1', port };
}

export function readPortalConfig(env: NodeJS.ProcessEnv = process.env): PortalConfig {
  const { host, port } = readPortalListen(env);
  const signUp = env.PORTAL_SIGNUP ?? 'invite';
  if (signUp !== 'open' && signUp !== 'invite') throw new Error(`PORTAL_SIGNUP must be open or invite, got ${JSON.stringify(signUp)}`);
  const store = readStoreSettings(env);
  const { dataDir, publicUrl } = store;
  const statusUrl = env.KONG_STATUS_URL ?? 'http://127.0.0.1:8100';
  return {
    host,
    port,
    ...store,
    signUp,
    apiUrl: url(env.PORTAL_API_URL ?? `${publicUrl}/v1`, 'PORTAL_API_URL'),
    ...adminConnection(env.KONG_ADMIN_URL ?? 'http://127.0.0.1:8001'),
    statusUrls: statusUrl === '' ? [] : [new URL(url(statusUrl, 'KONG_STATUS_URL'))],
    ...chartSettings(env),
    cookieSecret: cookieSecret(env, dataDir, store.databaseUrl !== undefined),
    ...supportEmail(env.PORTAL_SUPPORT_EMAIL),
    keysPerAccount: keysPerAccount(env.PORTAL_KEYS_PER_ACCOUNT),
  };
}
