// The local gateway's public surface: what `npm start`, the scripts, the benchmarks and the tests
// use. Everything else under gateway/local is internal and may change without them noticing
// (eslint's import-x/no-restricted-paths keeps it so).

// One gateway (control plane + one data-plane node), as `npm start` runs it.
export { startGateway, checkDeclarativeConfig, customPlugins, type GatewayOptions, type RunningGateway } from './cmd/gateway.ts';
export type { GatewayReady } from './cmd/start.ts';
export { readGatewaySettings, readClusterSettings, GATEWAY_DIR, DEFAULT_DECLARATIVE_CONFIG, LOCAL_DECK_ENV } from './cmd/settings.ts';
export type { SyncSummary } from './control-plane/declarative/sync.ts';
export { DeclarativeConfigError } from './control-plane/declarative/load-config.ts';
export { KONG_BUNDLED_PLUGINS } from './control-plane/schema/plugins/registry.ts';

// A cluster: the control plane, data-plane nodes behind a balancer, Redis (`npm run start:cluster`).
export { startCluster, type RunningCluster } from './cmd/cluster.ts';
export type { ClusterReady } from './cmd/cluster-start.ts';

// The data plane on its own, and the planes' protocol: what the data plane's tests drive (they
// import it from ./data-plane-entry.ts, which does not load the control plane).
export * from './data-plane-entry.ts';
