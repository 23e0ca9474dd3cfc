import type { Command } from 'commander';
import { AdminApi } from '../../../packages/provisioning/index.ts';
import { UsageError } from './errors.ts';
import { httpUrl } from './http-url.ts';

const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8001';

/** The options every command that talks to the Admin API takes. */
export interface ConnectionOptions {
  adminUrl?: string;
  adminHeader?: string;
  adminTimeout?: string;
  json?: boolean;
}

const DEFAULT_ADMIN_TIMEOUT_SECONDS = 30;

export const withConnectionOptions = (command: Command) =>
  command
    .option('--admin-url <url>', `Kong Admin API (env KONG_ADMIN_URL, default ${DEFAULT_ADMIN_URL})`)
    .option('--admin-header <header>', 'extra header for every Admin API call, "Name: value" (env KONG_ADMIN_HEADER), e.g. an admin token')
    .option('--admin-timeout <seconds>', `how long one Admin API call may take (env KONG_ADMIN_TIMEOUT, default ${DEFAULT_ADMIN_TIMEOUT_SECONDS})`)
    .option('--json', 'machine-readable output');

function adminUrl(options: ConnectionOptions, env: NodeJS.ProcessEnv): string {
  const [value, source] =
    options.adminUrl !== undefined ? [options.adminUrl, '--admin-url'] : [env.KONG_ADMIN_URL ?? DEFAULT_ADMIN_URL, 'KONG_ADMIN_URL'];
  const url = httpUrl(value, source, DEFAULT_ADMIN_URL);
  // fetch refuses a URL with credentials, and its error quotes the URL, password and all
  if (url.username || url.password) {
    throw new UsageError(`${source} must not hold credentials (user:password@): give them as --admin-header 'Authorization: Basic …' or KONG_ADMIN_HEADER`);
  }
  return value;
}

/**
 * Headers fetch (undici) sets itself, or refuses, or that would break the call: the body's length,
 * framing and type, and the connection's. Given anyway they failed every call as
 * "cannot reach the Kong Admin API … UND_ERR_…". Host stays allowed: a proxy may route by it.
 */
const CLIENT_HEADERS = new Set(['content-length', 'content-type', 'transfer-encoding', 'expect', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection']);

function adminHeaders(options: ConnectionOptions, env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  const [header, source] =
    options.adminHeader !== undefined ? [options.adminHeader, '--admin-header'] : [env.KONG_ADMIN_HEADER, 'KONG_ADMIN_HEADER'];
  if (!header) return undefined;
  const colon = header.indexOf(':');
  const name = header.slice(0, colon).trim();
  if (colon < 1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`${source} must look like "Name: value"`);
  if (CLIENT_HEADERS.has(name.toLowerCase())) {
    throw new UsageError(`${source} cannot set ${name}: the client sets it for each call (the body's framing and type, the connection)`);
  }
  const value = header.slice(colon + 1).trim();
  // What fetch can send (RFC 9110 field-value: tab, visible ASCII, space, bytes 0x80-0xFF); its own
  // errors quote the value, which is often a token
  if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) {
    throw new UsageError(
      `${source}'s value for ${name} holds a line break, a control character or a character beyond U+00FF, which no HTTP header can carry (the value is not shown)`,
    );
  }
  return { [name]: value };
}

function adminTimeoutMs(options: ConnectionOptions, env: NodeJS.ProcessEnv): number {
  const [value, source] =
    options.adminTimeout !== undefined ? [options.adminTimeout, '--admin-timeout'] : [env.KONG_ADMIN_TIMEOUT, 'KONG_ADMIN_TIMEOUT'];
  if (value === undefined || value === '') return DEFAULT_ADMIN_TIMEOUT_SECONDS * 1000;
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds < 1 || seconds > 3600) throw new UsageError(`${source} must be a whole number of seconds from 1 to 3600, got ${JSON.stringify(value)}`);
  return seconds * 1000;
}

/** The Admin API the options and the environment name; a malformed one is a UsageError. */
export function adminApi(options: ConnectionOptions, env: NodeJS.ProcessEnv): AdminApi {
  return AdminApi.connect({ url: adminUrl(options, env), headers: adminHeaders(options, env), timeoutMs: adminTimeoutMs(options, env) });
}
