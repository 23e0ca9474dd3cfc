import type { GatewayReady } from '../../gateway/local/start.ts';
import type { RunningChild } from './supervisor.ts';

/** What `npm start` prints once both processes serve; every command in it uses the addresses in use. */
export function stackBanner(supervisorPid: number, backend: RunningChild<string>, gateway: RunningChild<GatewayReady>): string {
  const g = gateway.ready;
  return `Animal Store API — local stack (supervisor pid ${supervisorPid}; Ctrl-C stops both processes)
  proxy      ${g.proxyUrl}/v1   (gateway, pid ${gateway.pid}: Kong-compatible, ${g.configFile})
  admin API  ${g.adminUrl}   (gateway, pid ${gateway.pid}: Kong Admin API subset)
  backend    ${backend.ready}   (backend, pid ${backend.pid}: reached only through the gateway)
  routes     ${g.routes.join('\n             ')}
  plugins    ${g.plugins.join(', ')}
  lua        ${g.lua}
  consumers  ${g.provisionedConsumers} provisioned through the Admin API
First key:  KONG_ADMIN_URL=${g.adminUrl} npm run consumers -- create --username alice --plan free
Use it:     curl -si ${g.proxyUrl}/v1/pets -H 'Authorization: Bearer <key>'
Reload kong.yml without a restart (the gateway process reloads):  kill -HUP ${gateway.pid}`;
}
