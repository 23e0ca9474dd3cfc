import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSharedDicts, type GatewayOptions } from './gateway.ts';

export const GATEWAY_DIR = fileURLToPath(new URL('../', import.meta.url));

function parseListen(name: string, value: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(value.trim().split(/\s+/)[0] ?? '');
  if (!match) throw new Error(`${name} must look like host:port (Kong's format), got ${JSON.stringify(value)}`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) };
}

/**
 * Local gateway settings, named as Kong's (KONG_PROXY_LISTEN, KONG_ADMIN_LISTEN,
 * KONG_NGINX_HTTP_LUA_SHARED_DICT) so that the same values work for both.
 */
export function readGatewaySettings(env: NodeJS.ProcessEnv = process.env): Omit<GatewayOptions, 'env' | 'now' | 'log'> {
  const proxy = parseListen('KONG_PROXY_LISTEN', env.KONG_PROXY_LISTEN ?? '0.0.0.0:8000');
  const admin = parseListen('KONG_ADMIN_LISTEN', env.KONG_ADMIN_LISTEN ?? '127.0.0.1:8001');
  return {
    configFile: env.KONG_DECLARATIVE_CONFIG ?? join(GATEWAY_DIR, 'kong.yml'),
    pluginsDir: env.GATEWAY_PLUGINS_DIR ?? join(GATEWAY_DIR, 'plugins'),
    dataFile: env.GATEWAY_DATA_FILE ?? join(env.DATA_DIR ?? './data', 'gateway.sqlite'),
    proxyHost: proxy.host,
    proxyPort: proxy.port,
    adminHost: admin.host,
    adminPort: admin.port,
    allowRemoteAdmin: env.KONG_ADMIN_ALLOW_REMOTE === 'true',
    sharedDicts: parseSharedDicts(env.KONG_NGINX_HTTP_LUA_SHARED_DICT ?? 'animal_store_edge 10m'),
  };
}
