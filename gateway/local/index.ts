// The local gateway's public surface: what `npm start`, the benchmark and the tests use.
export { startGateway, type GatewayOptions, type RunningGateway } from './cmd/gateway.ts';
export { readGatewaySettings, GATEWAY_DIR } from './cmd/settings.ts';
export type { SyncSummary } from './control-plane/declarative/sync.ts';
