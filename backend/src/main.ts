import { readBackendConfigOrExit } from './config.ts';
import { startBackend, type RunningBackend } from './server.ts';
import { isListenError, listenAddress, systemReason } from '../../packages/node-runtime/startup-error.js';

// Under `npm start` the supervisor (scripts/stack/) owns the terminal: it gets the address over
// the IPC channel, prints the banner and says when it stops us, so we stay quiet.
const supervised = process.send !== undefined;
const config = readBackendConfigOrExit();

let backend: RunningBackend;
try {
  backend = await startBackend(config);
} catch (error) {
  const where = isListenError(error)
    ? `cannot listen on ${listenAddress(error, config.host, config.port)} (BACKEND_HOST, BACKEND_PORT)`
    : `cannot open the database (${config.databaseUrl !== undefined ? 'DATABASE_URL' : `DATA_DIR=${config.dataDir}`})`;
  console.error(`[backend] ${where}: ${systemReason(error)}`);
  process.exit(1);
}

if (supervised) process.send!({ ready: backend.url });
else console.log(`[backend] listening on ${backend.url}`);

let stopping = false;
async function stop(reason: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (!supervised) console.log(`[backend] ${reason}: finishing in-flight requests`);
  await backend.close();
  process.exit(0);
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void stop(signal));
// The supervisor is gone (even by kill -9): no one would stop us any more.
process.on('disconnect', () => void stop('supervisor gone'));
