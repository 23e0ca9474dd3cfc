// The local gateway's public surface: what `npm start`, the benchmark, the scripts and the tests
// use. Everything else under gateway/local is internal and may change without them noticing.
export { startGateway, checkDeclarativeConfig, customPlugins, type GatewayOptions, type RunningGateway } from './cmd/gateway.ts';
export { readGatewaySettings, GATEWAY_DIR, LOCAL_RATE_LIMIT_ENV } from './cmd/settings.ts';
export type { SyncSummary } from './control-plane/declarative/sync.ts';
export { DeclarativeConfigError } from './control-plane/declarative/load-config.ts';
export { KONG_BUNDLED_PLUGINS } from './control-plane/schema/plugins/registry.ts';
