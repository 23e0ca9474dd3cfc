import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayOptions } from './gateway.ts';
import { ListenerError, parseListeners } from './listeners.ts';
import { tlsSettings } from './ssl-settings.ts';

/** gateway/: kong.yml and the custom plugins. */
export const GATEWAY_DIR = fileURLToPath(new URL('../../', import.meta.url));

class SettingError extends Error {}

/** KONG_DECLARATIVE_CONFIG's default: gateway/platform/kong.yml, then gateway/kong.yml. */
export const DEFAULT_DECLARATIVE_CONFIG = [join(GATEWAY_DIR, 'platform', 'kong.yml'), join(GATEWAY_DIR, 'kong.yml')].join(',');

/**
 * kong.yml's settings (gateway/kong.yml, decK's env templating) when none are given: our routes
 * on any host (only we are on this gateway), plain HTTP served beside https, one node on its
 * own, rate limits and bans in its memory, as `npm start` runs it. `npm run start:cluster` sets policy redis and the Redis it starts.
 */
export const LOCAL_DECK_ENV: Readonly<Record<string, string>> = {
  DECK_ANIMAL_STORE_HOSTS: '[]',
  // the developer portal's default address (portal/src/config.ts, PORTAL_PORT)
  DECK_ANIMAL_STORE_PORTAL_URL: 'http://127.0.0.1:3001',
  DECK_ANIMAL_STORE_HTTPS_ONLY: 'false',
  DECK_RATE_LIMIT_POLICY: 'local',
  DECK_RATE_LIMIT_REDIS_HOST: '127.0.0.1',
  DECK_RATE_LIMIT_REDIS_PORT: '6379',
};

export interface GatewaySettings extends Omit<GatewayOptions, 'env' | 'now' | 'every' | 'log'> {
  /** The proxy listener as configured (the node's own setting, for messages). */
  proxyListen: string;
}

function parseListen(name: string, value: string): { host: string; port: number } {
  // Kong's listen settings may carry flags after the address (`0.0.0.0:8000 reuseport`): the
  // address is what counts here.
  const match = /^(.*):(\d+)$/.exec(value.trim().split(/\s+/)[0] ?? '');
  const port = Number(match?.[2]);
  if (!match || port > 65535) throw new SettingError(`${name} must look like host:port (Kong's format), got ${JSON.stringify(value)}`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
}

function listenAddress(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function parseBoolean(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (['on', 'true'].includes(value)) return true;
  if (['off', 'false'].includes(value)) return false;
  throw new SettingError(`${name} must be on or off, got ${JSON.stringify(value)}`);
}

function parseWorkers(value: string | undefined): number | 'auto' {
  if (value === undefined || value === '' || value === 'auto') return 'auto';
  if (!/^[1-9]\d{0,3}$/.test(value)) throw new SettingError(`KONG_NGINX_WORKER_PROCESSES must be a positive number or auto, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** Kong's comma-separated lists (trusted_ips, headers); `off` empties headers. */
function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value.split(',').map((item) => item.trim()).filter((item) => item !== '' && item !== 'off');
}

/**
 * Kong's `plugins` setting: `bundled` (the bundled plugins the data plane implements) and custom
 * plugin names. `off` or a list without `bundled` would leave key-auth out of kong.yml's reach:
 * refused rather than half-honoured.
 */
function customPluginList(value: string): string[] {
  const names = value.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (!names.includes('bundled')) throw new SettingError(`KONG_PLUGINS must include "bundled" (the local gateway always loads them), got ${JSON.stringify(value)}`);
  return names.filter((name) => name !== 'bundled');
}

/** Kong's proxy_listen default (kong_defaults.lua:27): plain on 8000, TLS and HTTP/2 on 8443. */
const KONG_PROXY_LISTEN_DEFAULT = '0.0.0.0:8000 reuseport backlog=16384, 0.0.0.0:8443 http2 ssl reuseport backlog=16384';

function checkProxyListen(value: string): string {
  try {
    if (parseListeners('KONG_PROXY_LISTEN', value).length === 0) throw new SettingError('KONG_PROXY_LISTEN: off is not supported: the local gateway is a proxy');
  } catch (error) {
    if (error instanceof ListenerError) throw new SettingError(error.message);
    throw error;
  }
  return value;
}

/**
 * The local gateway's settings, named as Kong's (KONG_PROXY_LISTEN, KONG_ADMIN_LISTEN,
 * KONG_STATUS_LISTEN, KONG_NGINX_WORKER_PROCESSES, KONG_TRUSTED_IPS…) so that the same values
 * work for both. Throws SettingError naming the variable.
 */
export function readGatewaySettings(env: NodeJS.ProcessEnv = process.env): GatewaySettings {
  const proxyListen = checkProxyListen(env.KONG_PROXY_LISTEN ?? KONG_PROXY_LISTEN_DEFAULT);
  const admin = parseListen('KONG_ADMIN_LISTEN', env.KONG_ADMIN_LISTEN ?? '127.0.0.1:8001');
  const statusValue = env.KONG_STATUS_LISTEN ?? '127.0.0.1:8100';
  const status = statusValue === 'off' ? null : parseListen('KONG_STATUS_LISTEN', statusValue);
  const dataFile = env.GATEWAY_DATA_FILE ?? join(env.DATA_DIR ?? './data', 'gateway.sqlite');
  const trustedCertificate = list(env.KONG_LUA_SSL_TRUSTED_CERTIFICATE);
  try {
    tlsSettings({ suite: env.KONG_SSL_CIPHER_SUITE?.trim(), ciphers: env.KONG_SSL_CIPHERS, protocols: env.KONG_SSL_PROTOCOLS });
  } catch (error) {
    throw new SettingError(error instanceof Error ? error.message : String(error));
  }
  return {
    // the platform's file, then ours: each synced within its own select tags (docs/shared-kong.md)
    configFile: env.KONG_DECLARATIVE_CONFIG ?? DEFAULT_DECLARATIVE_CONFIG,
    pluginsDir: env.GATEWAY_PLUGINS_DIR ?? join(GATEWAY_DIR, 'plugins'),
    dataFile,
    prefix: resolve(env.KONG_PREFIX ?? join(dataFile === ':memory:' ? env.DATA_DIR ?? './data' : dirname(dataFile), 'gateway')),
    ...(env.KONG_PLUGINS !== undefined ? { plugins: customPluginList(env.KONG_PLUGINS) } : {}),
    ...(env.KONG_NODE_ID !== undefined ? { nodeId: parseNodeId(env.KONG_NODE_ID) } : {}),
    adminHost: admin.host,
    adminPort: admin.port,
    allowRemoteAdmin: env.KONG_ADMIN_ALLOW_REMOTE === 'true',
    proxyListen,
    node: {
      proxyListen,
      sslCert: list(env.KONG_SSL_CERT) ?? [],
      sslCertKey: list(env.KONG_SSL_CERT_KEY) ?? [],
      ...(env.KONG_SSL_CIPHER_SUITE !== undefined ? { sslCipherSuite: env.KONG_SSL_CIPHER_SUITE.trim() } : {}),
      ...(env.KONG_SSL_CIPHERS !== undefined ? { sslCiphers: env.KONG_SSL_CIPHERS } : {}),
      ...(env.KONG_SSL_PROTOCOLS !== undefined ? { sslProtocols: env.KONG_SSL_PROTOCOLS } : {}),
      statusListen: status ? listenAddress(status.host, status.port) : null,
      workerProcesses: parseWorkers(env.KONG_NGINX_WORKER_PROCESSES),
      // Kong renders the value after `lua_shared_dict`: a second dict is written
      // "a 10m; lua_shared_dict b 16m", which is how a prometheus_metrics size is given to Kong
      sharedDicts: (env.KONG_NGINX_HTTP_LUA_SHARED_DICT ?? 'animal_store_edge 10m')
        .split(';')
        .map((entry) => entry.trim().replace(/^lua_shared_dict\s+/, ''))
        .filter((entry) => entry !== ''),
      trustedIps: list(env.KONG_TRUSTED_IPS) ?? [],
      realIpHeader: env.KONG_REAL_IP_HEADER ?? 'X-Real-IP',
      realIpRecursive: parseBoolean('KONG_REAL_IP_RECURSIVE', env.KONG_REAL_IP_RECURSIVE, false),
      ...(env.KONG_HEADERS !== undefined ? { headers: list(env.KONG_HEADERS) } : {}),
      logLevel: parseLogLevel(env.KONG_LOG_LEVEL ?? 'notice'),
      ...(trustedCertificate ? { luaSslTrustedCertificate: trustedCertificate } : {}),
      ...(env.KONG_LUA_SSL_VERIFY_DEPTH !== undefined ? { luaSslVerifyDepth: parseDepth(env.KONG_LUA_SSL_VERIFY_DEPTH) } : {}),
    },
  };
}

/** Kong's log_level values, least severe first (kong/conf_loader/constants.lua:477-486). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warn', 'error', 'crit', 'alert', 'emerg'] as const;

/** kong/conf_loader/parse.lua:233-235: an enum setting outside its values, named as Kong names it. */
function parseLogLevel(value: string): string {
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new SettingError(`KONG_LOG_LEVEL has an invalid value: '${value}' (${LOG_LEVELS.join(', ')})`);
  }
  return value;
}

/** kong/conf_loader/parse.lua:867-869: node_id must be a valid UUID. */
function parseNodeId(value: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) throw new SettingError(`KONG_NODE_ID must be a valid UUID, got ${JSON.stringify(value)}`);
  return value;
}

function parseDepth(value: string): number {
  if (!/^\d{1,3}$/.test(value)) throw new SettingError(`KONG_LUA_SSL_VERIFY_DEPTH must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

export interface ClusterSettings extends Omit<GatewaySettings, 'proxyListen' | 'dataFile' | 'prefix'> {
  /** DATA_DIR/cluster: each piece's directory is in it. */
  dir: string;
  balancer: { host: string; port: number };
  /** The balancer's TLS listener (KONG_PROXY_LISTEN's `ssl` entry), where it terminates TLS. */
  balancerSsl?: { host: string; port: number };
  clusterListen: { host: string; port: number };
  nodes: Array<{ host: string; port: number }>;
  /** Each node's Status API, by position (empty: none). */
  statusListens: Array<{ host: string; port: number }>;
  redis: { host: string; port: number };
}

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/**
 * `npm run start:cluster`'s settings: the fixed addresses of the issue (balancer 127.0.0.1:8000,
 * Admin API :8001, cluster listener :8005, nodes :8010 and :8011, Redis :6380), each movable with
 * its variable (KONG_PROXY_LISTEN is the balancer's), and the node settings of readGatewaySettings.
 */
export function readClusterSettings(env: NodeJS.ProcessEnv = process.env): ClusterSettings {
  // the balancer's listeners: plain, and TLS terminated there as compose's kong-lb does
  const proxyListen = env.KONG_PROXY_LISTEN ?? '127.0.0.1:8000, 127.0.0.1:8443 http2 ssl';
  const { proxyListen: _proxy, dataFile: _dataFile, prefix: _prefix, node, ...gateway } = readGatewaySettings({
    KONG_STATUS_LISTEN: 'off',
    ...env,
    KONG_PROXY_LISTEN: proxyListen,
  });
  const balancerListeners = parseListeners('KONG_PROXY_LISTEN', proxyListen);
  const plain = balancerListeners.find((listener) => !listener.ssl);
  const ssl = balancerListeners.find((listener) => listener.ssl);
  if (!plain) throw new SettingError('KONG_PROXY_LISTEN (the balancer) must have one entry without ssl');
  const nodes = (env.CLUSTER_NODE_LISTEN ?? '127.0.0.1:8010,127.0.0.1:8011')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '')
    .map((value) => parseListen('CLUSTER_NODE_LISTEN', value));
  if (nodes.length === 0) throw new SettingError('CLUSTER_NODE_LISTEN must list at least one host:port');
  const redis = parseListen('CLUSTER_REDIS_LISTEN', env.CLUSTER_REDIS_LISTEN ?? '127.0.0.1:6380');
  if (!LOOPBACK_HOST.test(redis.host)) throw new SettingError(`CLUSTER_REDIS_LISTEN must be a loopback address (the cluster's Redis has no password), got ${redis.host}`);
  if (node?.statusListen) throw new SettingError('KONG_STATUS_LISTEN: each node has its own, set them with CLUSTER_NODE_STATUS_LISTEN; leave it unset');
  // Kong's status_listen, one per node: 127.0.0.1:8100, :8101… (Prometheus scrapes each)
  const statusValue = env.CLUSTER_NODE_STATUS_LISTEN ?? nodes.map((_, i) => `127.0.0.1:${8100 + i}`).join(',');
  const statusListens = statusValue.trim() === 'off'
    ? []
    : statusValue.split(',').map((value) => value.trim()).filter((value) => value !== '').map((value) => parseListen('CLUSTER_NODE_STATUS_LISTEN', value));
  if (statusListens.length > 0 && statusListens.length !== nodes.length) {
    throw new SettingError(`CLUSTER_NODE_STATUS_LISTEN must list one host:port per node (${nodes.length}), or be off`);
  }
  return {
    ...gateway,
    dir: resolve(env.DATA_DIR ?? './data', 'cluster'),
    balancer: { host: plain.host, port: plain.port },
    ...(ssl ? { balancerSsl: { host: ssl.host, port: ssl.port } } : {}),
    clusterListen: parseListen('KONG_CLUSTER_LISTEN', env.KONG_CLUSTER_LISTEN ?? '127.0.0.1:8005'),
    nodes,
    statusListens,
    redis,
    node,
  };
}
