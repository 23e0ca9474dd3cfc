// The portal's listen address as `npm start` checks it before it starts anything: a public entry
// of its own, as index.ts imports the whole portal (koa, its pages, the provisioning library).
export { readPortalListen } from './config.ts';
