import { accessSync, constants } from 'node:fs';
import { isListenError, listenAddress, systemReason } from '../../backend/src/startup-error.ts';
import { DeclarativeConfigError } from './control-plane/declarative/load-config.ts';
import { startGateway, type GatewayOptions, type RunningGateway } from './gateway.ts';
import { luaJitUnavailable } from './lua/vm/open-lua-vm.ts';
import { readGatewaySettings } from './settings.ts';

/**
 * The local gateway's process. `npm start` runs it beside the backend under the supervisor
 * (scripts/stack/), which passes DECK_ANIMAL_STORE_BACKEND_URL and prints the banner from the
 * summary this process sends over the IPC channel. Alone: `npm run start:gateway`.
 */
export interface GatewayReady {
  proxyUrl: string;
  adminUrl: string;
  configFile: string;
  routes: string[];
  plugins: string[];
  /** The Lua VM custom plugins run in, and why not LuaJIT when it is not. */
  lua: string;
  /** Consumers outside kong.yml's select tags, i.e. created through the Admin API. */
  provisionedConsumers: number;
}

const supervised = process.send !== undefined;

type Settings = Omit<GatewayOptions, 'env' | 'now' | 'log'>;
let settings: Settings;
try {
  settings = readGatewaySettings();
} catch (error) {
  console.error(`[gateway] ${(error as Error).message}`);
  process.exit(2);
}

/** One line naming what failed and where: the variable, the address, the file. */
function describeStartupError(error: unknown, s: Settings): string {
  if (error instanceof DeclarativeConfigError) return `refusing to start: ${error.message}`;
  if (/^refusing to bind the Admin API/.test((error as Error).message)) return `KONG_ADMIN_LISTEN: ${(error as Error).message}`;
  if (isListenError(error)) {
    const isAdmin = error.port === s.adminPort || (error.hostname !== undefined && error.hostname === s.adminHost);
    const variable = isAdmin && error.port !== s.proxyPort ? 'KONG_ADMIN_LISTEN' : 'KONG_PROXY_LISTEN';
    const [host, port] = variable === 'KONG_ADMIN_LISTEN' ? [s.adminHost!, s.adminPort!] : [s.proxyHost!, s.proxyPort!];
    return `cannot listen on ${listenAddress(error, host, port)} (${variable}): ${systemReason(error)}`;
  }
  const { code, path } = error as { code?: string; path?: string };
  if (code && path) {
    const variable = path === s.configFile ? ' (KONG_DECLARATIVE_CONFIG)' : s.dataFile.startsWith(path) ? ' (GATEWAY_DATA_FILE)' : '';
    return `cannot open ${path}${variable}: ${systemReason(error)}`;
  }
  return `refusing to start: ${(error as Error).message.split('\n')[0]}`;
}

let gateway: RunningGateway;
try {
  accessSync(settings.configFile, constants.R_OK); // a missing file is one line, not a list of one problem
  gateway = await startGateway({ ...settings, env: process.env });
} catch (error) {
  console.error(`[gateway] ${describeStartupError(error, settings)}`);
  process.exit(1);
}

const snapshot = gateway.runtime.snapshot;
const ready: GatewayReady = {
  proxyUrl: gateway.proxyUrl,
  adminUrl: gateway.adminUrl,
  configFile: settings.configFile,
  routes: snapshot.list('routes').map((r) => `${r.name} ${r.methods?.join('|') ?? '*'} ${r.paths?.join(',') ?? ''}`),
  plugins: [...new Set(snapshot.list('plugins').map((p) => p.name))],
  lua: `${gateway.runtime.lua.vm.description}${gateway.runtime.lua.vm.kind === 'luajit' ? '' : ` — LuaJIT unavailable: ${luaJitUnavailable()}`}`,
  provisionedConsumers: snapshot.list('consumers').filter((c) => !gateway.selectTags.every((t) => c.tags?.includes(t))).length,
};
if (supervised) process.send!({ ready });
else console.log(`[gateway] proxy ${ready.proxyUrl}, Admin API ${ready.adminUrl}; reload kong.yml: kill -HUP ${process.pid}`);

process.on('SIGHUP', () => {
  gateway.reload().then(
    (summary) => console.log(`[gateway] kong.yml reloaded: ${summary.created} created, ${summary.updated} updated, ${summary.deleted} deleted`),
    (error: Error) => console.error(`[gateway] kong.yml NOT reloaded, the running configuration stays: ${error.message}`),
  );
});

let stopping = false;
async function stop(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (!supervised) console.log(`[gateway] ${reason}: shutting down`);
  await gateway.close();
  process.exit(0);
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal));
process.on('disconnect', () => void stop('supervisor gone'));
