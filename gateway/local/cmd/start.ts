import { accessSync, constants, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isListenError, listenAddress, systemReason } from '../../../packages/node-runtime/startup-error.js';
import type { Logger } from '../control-plane/control-plane.ts';
import { DeclarativeConfigError } from '../control-plane/declarative/load-config.ts';
import { DataPlaneStartError } from './data-plane-node.ts';
import { AdminListenRefused, declarativeFiles, startGateway, type RunningGateway } from './gateway.ts';
import { NginxNotFoundError } from './nginx-binary.ts';
import { defaultCertificatePaths } from './ssl-certificates.ts';
import { LOCAL_DECK_ENV, LOG_LEVELS, readGatewaySettings, type GatewaySettings } from './settings.ts';

/**
 * The local gateway's process: the control plane, and the data-plane node (nginx) it runs. `npm
 * start` runs it beside the backend under the supervisor (scripts/stack/), which passes
 * DECK_ANIMAL_STORE_BACKEND_URL and prints the banner from the summary sent over the IPC channel.
 * Alone: `npm run start:gateway`.
 */
export interface GatewayReady {
  proxyUrl: string;
  /** The first ssl proxy listener (KONG_PROXY_LISTEN's `ssl`), when there is one. */
  proxySslUrl: string | undefined;
  /**
   * The file clients trust to reach proxySslUrl when it serves the default self-signed
   * certificates (both of them: <prefix>/ssl/kong-default-ca.crt); undefined with KONG_SSL_CERT.
   */
  proxyCaFile: string | undefined;
  adminUrl: string;
  statusUrl: string | undefined;
  configFile: string;
  routes: string[];
  plugins: string[];
  /** What runs the data plane: nginx or OpenResty, and its LuaJIT. */
  engine: string;
  /** nginx's master pid (its workers are its children). */
  nginxPid: number;
  /** Consumers outside every declarative file's select tags, i.e. created through the Admin API. */
  provisionedConsumers: number;
  /** kong.yml's edge plugin refuses plain HTTP (https_only, DECK_ANIMAL_STORE_HTTPS_ONLY=true). */
  httpsOnly: boolean;
}

const supervised = process.send !== undefined;

let settings: GatewaySettings;
try {
  settings = readGatewaySettings();
} catch (error) {
  console.error(`[gateway] ${(error as Error).message}`);
  process.exit(2);
}

/** One line naming what failed and where: the variable, the address, the file. */
function describeStartupError(error: unknown, s: GatewaySettings): string {
  if (error instanceof DeclarativeConfigError) return `refusing to start: ${error.message}`;
  if (error instanceof AdminListenRefused) return `KONG_ADMIN_LISTEN: ${error.message}`;
  if (error instanceof NginxNotFoundError) return error.message;
  if (error instanceof DataPlaneStartError) {
    const busy = error.addressInUse;
    if (busy) {
      const variable = busy === s.node?.statusListen ? 'KONG_STATUS_LISTEN' : 'KONG_PROXY_LISTEN';
      return `cannot listen on ${busy} (${variable}): address already in use`;
    }
    return error.message.split('\n')[0]!;
  }
  if (isListenError(error)) return `cannot listen on ${listenAddress(error, s.adminHost!, s.adminPort!)} (KONG_ADMIN_LISTEN): ${systemReason(error)}`;
  const { code, path } = error as { code?: string; path?: string };
  if (code && path) {
    const variable = declarativeFiles(s.configFile).includes(path) ? ' (KONG_DECLARATIVE_CONFIG)' : s.dataFile.startsWith(path) ? ' (GATEWAY_DATA_FILE)' : '';
    return `cannot open ${path}${variable}: ${systemReason(error)}`;
  }
  return `refusing to start: ${(error as Error).message.split('\n')[0]}`;
}

/**
 * Every line goes to <prefix>/logs/error.log, as Kong's proxy_error_log; once started, warnings
 * and errors also go to stderr, where the supervisor shows them (a failed start is one line).
 */
let started = false;
function fileLogger(prefix: string, logLevel: string): Logger {
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  const file = createWriteStream(join(prefix, 'logs', 'error.log'), { flags: 'a' });
  // the control plane's lines at KONG_LOG_LEVEL and above, as nginx's own (debug never: too many)
  const least = Math.max(LOG_LEVELS.indexOf('info'), LOG_LEVELS.indexOf(logLevel as (typeof LOG_LEVELS)[number]));
  return (level, message) => {
    if (LOG_LEVELS.indexOf(level === 'err' ? 'error' : level) < least) return;
    file.write(`${level}: ${message}\n`);
    if (started && (level === 'warn' || level === 'err')) console.error(`[gateway] ${level}: ${message}`);
  };
}

let gateway: RunningGateway;
try {
  // a missing file is one line, not a list of one problem
  for (const file of declarativeFiles(settings.configFile)) accessSync(file, constants.R_OK);
  gateway = await startGateway({ ...settings, env: { ...LOCAL_DECK_ENV, ...process.env }, log: fileLogger(settings.prefix, settings.node?.logLevel ?? 'notice') });
} catch (error) {
  console.error(`[gateway] ${describeStartupError(error, settings)}`);
  process.exit(1);
}

started = true;
const store = gateway.controlPlane.store.snapshot;
const scopes = gateway.controlPlane.selectTags;
const ready: GatewayReady = {
  proxyUrl: gateway.proxyUrl,
  proxySslUrl: gateway.node.proxySslUrl,
  proxyCaFile: gateway.node.proxySslUrl && gateway.node.settings.sslCert.length === 0
    ? defaultCertificatePaths(gateway.node.prefix).trust
    : undefined,
  adminUrl: gateway.adminUrl,
  statusUrl: gateway.statusUrl,
  configFile: settings.configFile,
  routes: store.list('routes').map((r) => `${r.name} ${r.methods?.join('|') ?? '*'} ${r.paths?.join(',') ?? ''}`),
  plugins: [...new Set(store.list('plugins').map((p) => p.name))],
  engine: gateway.engine,
  nginxPid: gateway.node.pid,
  provisionedConsumers: store.list('consumers').filter((c) => !scopes.some((tags) => tags.every((t) => c.tags?.includes(t)))).length,
  httpsOnly: store.list('plugins').some((p) => p.name === 'animal-store-edge' && (p.config as { https_only?: unknown }).https_only === true),
};
if (supervised) process.send!({ ready });
else console.log(`[gateway] proxy ${ready.proxyUrl}${ready.proxySslUrl ? ` and ${ready.proxySslUrl}` : ''}, Admin API ${ready.adminUrl}; reload kong.yml: kill -HUP ${process.pid}`);

process.on('SIGHUP', () => {
  gateway.reload().then(
    (summary) => console.log(`[gateway] kong.yml reloaded: ${summary.created} created, ${summary.updated} updated, ${summary.deleted} deleted`),
    (error: Error) => console.error(`[gateway] kong.yml NOT reloaded, the running configuration stays: ${error.message}`),
  );
});

let stopping = false;
async function stop(reason: string, code = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (!supervised) console.log(`[gateway] ${reason}: shutting down`);
  await gateway.close();
  process.exit(code);
}
// nginx dying on its own is a crash of the gateway: say so and stop, as the supervisor expects.
void gateway.node.exited.then(({ code, signal }) => {
  if (stopping) return;
  console.error(`[gateway] the data-plane node (nginx, pid ${gateway.node.pid}) exited (${signal ?? `code ${code}`})`);
  void stop('data plane gone', 1);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal));
process.on('disconnect', () => void stop('supervisor gone'));
