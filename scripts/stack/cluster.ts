import { fileURLToPath } from 'node:url';
import { readBackendConfigOrExit } from '../../backend/src/config.ts';
import type { ClusterReady } from '../../gateway/local/index.ts';
import { readClusterSettings } from '../../gateway/local/index.ts';
import { clusterBanner } from './banner.ts';
import { StartFailed, Supervisor, describeExit } from './supervisor.ts';

/**
 * `npm run start:cluster`: the backend, and the local cluster (Redis, control plane, two
 * data-plane nodes, the nginx balancer) in the process gateway/local/cmd/cluster-start.ts, under
 * the supervisor `npm start` uses. Settings are checked first: a bad variable starts nothing.
 */
readBackendConfigOrExit();
try {
  readClusterSettings();
} catch (error) {
  console.error(`[cluster] ${(error as Error).message}`);
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
    console.log(`[stack] ${signal}: stopping the cluster (balancer, nodes, control plane, Redis), then the backend`);
    void supervisor.stop().then((clean) => process.exit(clean ? 0 : 1));
  });
}

const tsx = ['--import', import.meta.resolve('tsx')];
const entry = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const cwd = process.cwd();
try {
  const backend = await supervisor.start<string>({ name: 'backend', nodeArgs: [...tsx, entry('backend/src/main.ts')], env: process.env, cwd });
  const cluster = await supervisor.start<ClusterReady>({
    name: 'cluster',
    nodeArgs: ['--max-semi-space-size=4', entry('gateway/local/cmd/cluster-start.built.mjs')],
    env: { DECK_ANIMAL_STORE_BACKEND_URL: backend.ready, ...process.env },
    cwd,
  });
  if (!stopRequested) console.log(clusterBanner(process.pid, backend, cluster));
} catch (error) {
  if (!(error instanceof StartFailed)) throw error;
  if (error.exit.signal) console.error(`[stack] ${error.child} ${describeExit(error.exit)} while starting`);
  await supervisor.stop();
  process.exit(error.exit.code || 1);
}
