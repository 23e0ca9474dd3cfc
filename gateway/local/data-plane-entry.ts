// The data plane on its own (a node, the cluster's balancer in front of nodes) and the planes'
// protocol, as the data plane's tests drive them: a public entry of its own, as index.ts imports
// the whole gateway (the control plane's koa, knex, yaml…: ~2.4 MB of bundle a test worker would
// compile and never run, docs/testing.md).
export { startDataPlaneNode, type DataPlaneNode, type DataPlaneNodeOptions } from './cmd/data-plane-node.ts';
export { BALANCER_ERROR_PREFIX, startBalancer, type RunningBalancer } from './cmd/balancer.ts';
export { describePlugins } from './cmd/describe-plugins.ts';
export { findNginx } from './cmd/nginx-binary.ts';
export { DATA_PLANE_DIR, PROMETHEUS_DICT_SIZE } from './cmd/nginx-prefix.ts';
export { ClusterListener } from './control-plane/snapshot/cluster-listener.ts';
export type { CompiledSnapshot, DataPlaneSnapshot } from './control-plane/snapshot/snapshot.ts';
export { SNAPSHOT_SCHEMA_FILE, SNAPSHOT_TYPES, snapshotSchemaText } from './control-plane/snapshot/snapshot-schema.ts';
