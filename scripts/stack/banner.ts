import type { ClusterReady } from '../../gateway/local/index.ts';
import type { GatewayReady } from '../../gateway/local/index.ts';
import type { RunningChild } from './supervisor.ts';

/**
 * The https hint: the default certificates name `localhost`, so a loopback or wildcard address is
 * written as localhost for the name check to pass; with KONG_SSL_CERT the client's own CAs apply.
 */
function tlsCurl(g: GatewayReady): string {
  if (!g.proxySslUrl) return '';
  const url = new URL(g.proxySslUrl);
  if (g.proxyCaFile && /^(127\.0\.0\.1|0\.0\.0\.0)$/.test(url.hostname)) url.hostname = 'localhost';
  const origin = url.origin;
  return `\nOver TLS:   curl -si${g.proxyCaFile ? ` --cacert ${g.proxyCaFile}` : ''} ${origin}/v1/pets -H 'Authorization: Bearer <key>'`;
}

/** What `npm start` prints once both processes serve; every command in it uses the addresses in use. */
export function stackBanner(
  supervisorPid: number,
  backend: RunningChild<string>,
  gateway: RunningChild<GatewayReady>,
  portal?: RunningChild<string>,
): string {
  const g = gateway.ready;
  return `Animal Store API — local stack (supervisor pid ${supervisorPid}; Ctrl-C stops every process)
  proxy      ${g.proxyUrl}/v1   (data plane: nginx pid ${g.nginxPid}, Kong-compatible, ${g.configFile})${g.proxySslUrl ? `
  https      ${g.proxySslUrl}/v1   (TLS 1.2/1.3 and HTTP/2${g.proxyCaFile ? `; self-signed, trust ${g.proxyCaFile}` : ''}) the only scheme in production` : ''}
  admin API  ${g.adminUrl}   (control plane, pid ${gateway.pid}: Kong Admin API subset)${g.statusUrl ? `
  status API ${g.statusUrl}   (data plane: /status, /metrics)` : ''}
  backend    ${backend.ready}   (backend, pid ${backend.pid}: reached only through the gateway)${portal ? `
  portal     ${g.proxyUrl}/portal/   (developer portal, pid ${portal.pid}, on ${portal.ready}: sign up for a key)` : ''}
  routes     ${g.routes.join('\n             ')}
  plugins    ${g.plugins.join(', ')}
  engine     ${g.engine}
  consumers  ${g.provisionedConsumers} provisioned through the Admin API
First key:  KONG_ADMIN_URL=${g.adminUrl} npm run consumers -- create --username alice --plan free
Use it:     curl -si ${g.proxyUrl}/v1/pets -H 'Authorization: Bearer <key>'${tlsCurl(g)}
Reload kong.yml without a restart (the control plane reloads):  kill -HUP ${gateway.pid}`;
}

/** What `npm run start:cluster` prints once every piece serves: each address, with its pid. */
export function clusterBanner(supervisorPid: number, backend: RunningChild<string>, cluster: RunningChild<ClusterReady>): string {
  const c = cluster.ready;
  const nodes = c.nodes
    .map((node, i) => `  node ${i + 1}     ${node.url}/v1   (data plane: nginx pid ${node.pid}, ${node.prefix}${node.statusUrl ? `; status API ${node.statusUrl}` : ''})`)
    .join('\n');
  // `consumers usage` reads one Status API unless told each node's: name them all.
  const statusUrls = c.nodes.flatMap((node) => (node.statusUrl ? [` --status-url ${node.statusUrl}`] : [])).join('');
  const usage = statusUrls ? `\nUsage:      KONG_ADMIN_URL=${c.adminUrl} npm run --silent consumers -- usage${statusUrls}` : '';
  const { count, policies } = c.plansElsewhere;
  const warning = count > 0
    ? `\nwarning:    ${count} plan plugin(s) still count with policy ${policies.join(', ')}, not ${c.policy}: ` +
      `KONG_ADMIN_URL=${c.adminUrl} npm run consumers -- plans sync`
    : '';
  return `Animal Store API — local cluster (supervisor pid ${supervisorPid}; Ctrl-C stops everything below)
  balancer   ${c.balancerUrl}/v1   (nginx pid ${c.balancerPid}, round robin over the nodes)${c.balancerSsl ? `
  https      ${c.balancerSsl.url}/v1   (TLS ends at the balancer, as compose's kong-lb; self-signed, trust ${c.balancerSsl.caFile})` : ''}
${nodes}
  admin API  ${c.adminUrl}   (control plane, role control_plane, pid ${c.controlPlanePid})
  cluster    ${c.clusterAddress}   (the control plane's listener the nodes long-poll)
  redis      ${c.redis.address}   (redis-server ${c.redis.version}, pid ${c.redis.pid}: rate limits and bans, policy ${c.policy})
  backend    ${backend.ready}   (backend, pid ${backend.pid}: reached only through the gateway)
  engine     ${c.engine}
  files      ${c.dir}   (redis/, control-plane/, node-N/, balancer/, cluster.log)
First key:  KONG_ADMIN_URL=${c.adminUrl} npm run consumers -- create --username alice --plan free
Use it:     curl -si ${c.balancerUrl}/v1/pets -H 'Authorization: Bearer <key>'${usage}
Reload kong.yml without a restart:  kill -HUP ${c.controlPlanePid}${warning}`;
}
