import { readBackendConfigOrExit } from '../../backend/src/config.ts';
import { startBackend } from '../../backend/src/server.ts';
import { DeclarativeConfigError } from './config/declarative.ts';
import { startGateway } from './gateway.ts';
import { luaJitUnavailable } from './lua/vm/open-lua-vm.ts';
import { readGatewaySettings } from './settings.ts';

/** `npm start`: the backend and the local Kong-compatible gateway in front of it. */
const backend = await startBackend(readBackendConfigOrExit());
const settings = readGatewaySettings();
const env = { DECK_ANIMAL_STORE_BACKEND_URL: backend.url, ...process.env };

let gateway;
try {
  gateway = await startGateway({ ...settings, env });
} catch (error) {
  console.error(`[gateway] refusing to start: ${error instanceof DeclarativeConfigError ? error.message : (error as Error).message}`);
  await backend.close();
  process.exit(1);
}

const snapshot = gateway.runtime.snapshot;
const routes = snapshot.list('routes');
const consumers = snapshot.list('consumers').filter((c) => !gateway.selectTags.every((t) => c.tags?.includes(t)));
console.log(`Animal Store API — local stack
  proxy      ${gateway.proxyUrl}/v1   (Kong-compatible gateway, ${settings.configFile})
  admin API  ${gateway.adminUrl}   (Kong Admin API subset)
  backend    ${backend.url}   (reached only through the gateway)
  routes     ${routes.map((r) => `${r.name} ${r.methods?.join('|') ?? '*'} ${r.paths?.join(',') ?? ''}`).join('\n             ')}
  plugins    ${[...new Set(snapshot.list('plugins').map((p) => p.name))].join(', ')}
  lua        ${gateway.runtime.lua.vm.description}${gateway.runtime.lua.vm.kind === 'luajit' ? '' : ` — LuaJIT unavailable: ${luaJitUnavailable()}`}
  consumers  ${consumers.length} provisioned through the Admin API
First key:  npm run consumers -- create --username alice --plan free
Reload kong.yml without a restart:  kill -HUP ${process.pid}`);

process.on('SIGHUP', () => {
  gateway.reload().then(
    (summary) => console.log(`[gateway] kong.yml reloaded: ${summary.created} created, ${summary.updated} updated, ${summary.deleted} deleted`),
    (error: Error) => console.error(`[gateway] kong.yml NOT reloaded, the running configuration stays: ${error.message}`),
  );
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    console.log(`[stack] ${signal}: shutting down`);
    await gateway.close();
    await backend.close();
    process.exit(0);
  });
}
