import { readPortalConfig, type PortalConfig } from './config.ts';
import { startPortal, type RunningPortal } from './server.ts';
import { isListenError, listenAddress, systemReason } from '../../packages/node-runtime/startup-error.js';

// As backend/src/main.ts: under `npm start` the supervisor owns the terminal and gets our address over IPC.
const supervised = process.send !== undefined;
let config: PortalConfig;
try {
  config = readPortalConfig();
} catch (error) {
  console.error(`[portal] ${(error as Error).message}`);
  process.exit(2);
}

let portal: RunningPortal;
try {
  portal = await startPortal(config);
} catch (error) {
  const where = isListenError(error)
    ? `cannot listen on ${listenAddress(error, config.host, config.port)} (PORTAL_HOST, PORTAL_PORT)`
    : config.databaseUrl !== undefined
      ? 'cannot open the database (PORTAL_DATABASE_URL)' // never the URL: it carries the password
      : `cannot open the database (PORTAL_DATA_DIR=${config.dataDir})`;
  console.error(`[portal] ${where}: ${systemReason(error)}`);
  process.exit(1);
}

if (supervised) process.send!({ ready: portal.url });
else console.log(`[portal] listening on ${portal.url} (sign-up ${config.signUp})`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await portal.close();
  process.exit(0);
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop());
process.on('disconnect', () => void stop());
