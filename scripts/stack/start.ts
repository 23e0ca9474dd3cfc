import { fileURLToPath } from 'node:url';
import { readBackendConfigOrExit } from '../../backend/src/config.ts';
import type { GatewayReady } from '../../gateway/local/index.ts';
import { readGatewaySettings } from '../../gateway/local/index.ts';
import { stackBanner } from './banner.ts';
import { StartFailed, Supervisor, describeExit } from './supervisor.ts';

/**
 * `npm start`: the backend and the local gateway as two processes, as in production, under one
 * supervisor (./supervisor.ts). Settings are checked here first, so a bad variable starts nothing.
 */
readBackendConfigOrExit();
try {
  readGatewaySettings();
} catch (error) {
  console.error(`[gateway] ${(error as Error).message}`);
  process.exit(2);
}

const supervisor = new Supervisor(
  (line) => console.error(line),
  () => process.exit(1),
);

let stopRequested = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopRequested) return;
    stopRequested = true;
    console.log(`[stack] ${signal}: stopping the gateway, then the backend`);
    void supervisor.stop().then((clean) => process.exit(clean ? 0 : 1));
  });
}

// Absolute paths: the children run in our working directory, where DATA_DIR and
// KONG_DECLARATIVE_CONFIG are relative to, wherever the repository is.
const tsx = ['--import', import.meta.resolve('tsx')];
const entry = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const cwd = process.cwd();
try {
  const backend = await supervisor.start<string>({ name: 'backend', nodeArgs: [...tsx, entry('backend/src/main.ts')], env: process.env, cwd });
  const gateway = await supervisor.start<GatewayReady>({
    name: 'gateway',
    // A 4 MB young generation keeps the control plane's RSS ~20-30 MB lower at no measurable cost.
    // Plain JavaScript (scripts/build-gateway.sh, run by prestart): tsx would add ~35 MB.
    nodeArgs: ['--max-semi-space-size=4', entry('gateway/local/cmd/start.built.mjs')],
    env: { DECK_ANIMAL_STORE_BACKEND_URL: backend.ready, ...process.env },
    cwd,
  });
  if (!stopRequested) console.log(stackBanner(process.pid, backend, gateway));
} catch (error) {
  if (!(error instanceof StartFailed)) throw error;
  // The child has said why in one line, unless a signal killed it.
  if (error.exit.signal) console.error(`[stack] ${error.child} ${describeExit(error.exit)} while starting`);
  await supervisor.stop();
  process.exit(error.exit.code || 1);
}
