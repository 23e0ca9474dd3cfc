import type { ClusterReady } from '../../gateway/local/index.ts';
import { readClusterSettings } from '../../gateway/local/settings.ts';
import { clusterBanner } from './banner.ts';
import { runStack } from './run-stack.ts';

/**
 * `npm run start:cluster`: the backend, and the local cluster (Redis, control plane, two
 * data-plane nodes, the nginx balancer) in the process gateway/local/cmd/cluster-start.ts.
 */
await runStack<ClusterReady>({
  name: 'cluster',
  checkSettings: () => void readClusterSettings(),
  stopping: 'the cluster (balancer, nodes, control plane, Redis)',
  builtEntry: 'gateway/local/cmd/cluster-start.built.mjs',
  banner: clusterBanner,
});
