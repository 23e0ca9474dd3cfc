// The gateway's settings as `npm start` and `npm run start:cluster` check them before they start
// anything, and its directory (the tests find its files from it): a public entry of its own, as
// index.ts imports the whole gateway (koa, knex, redis…, ~0.5 CPU-s in a process that only reads
// the environment).
export { readGatewaySettings, readClusterSettings, GATEWAY_DIR } from './cmd/settings.ts';
