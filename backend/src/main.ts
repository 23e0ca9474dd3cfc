import { readBackendConfigOrExit } from './config.ts';
import { startBackend } from './server.ts';

const backend = await startBackend(readBackendConfigOrExit());
console.log(`[backend] listening on ${backend.url}`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    console.log(`[backend] ${signal}: finishing in-flight requests`);
    await backend.close();
    process.exit(0);
  });
}
