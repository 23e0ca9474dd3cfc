import type { GatewayReady } from '../../gateway/local/cmd/start.ts';
import type { RunningChild } from './supervisor.ts';

/** What `npm start` prints once both processes serve; every command in it uses the addresses in use. */
export function stackBanner(supervisorPid: number, backend: RunningChild<string>, gateway: RunningChild<GatewayReady>): string {
  const g = gateway.ready;
  return `Animal Store API — local stack (supervisor pid ${supervisorPid}; Ctrl-C stops both processes)
  proxy      ${g.proxyUrl}/v1   (data plane: nginx pid ${g.nginxPid}, Kong-compatible, ${g.configFile})
  admin API  ${g.adminUrl}   (control plane, pid ${gateway.pid}: Kong Admin API subset)${g.statusUrl ? `
  status API ${g.statusUrl}   (data plane: /status, /metrics)` : ''}
  backend    ${backend.ready}   (backend, pid ${backend.pid}: reached only through the gateway)
  routes     ${g.routes.join('\n             ')}
  plugins    ${g.plugins.join(', ')}
  engine     ${g.engine}
  consumers  ${g.provisionedConsumers} provisioned through the Admin API
First key:  KONG_ADMIN_URL=${g.adminUrl} npm run consumers -- create --username alice --plan free
Use it:     curl -si ${g.proxyUrl}/v1/pets -H 'Authorization: Bearer <key>'
Reload kong.yml without a restart (the control plane reloads):  kill -HUP ${gateway.pid}`;
}
