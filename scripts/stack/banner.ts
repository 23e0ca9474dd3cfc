import type { ClusterReady } from '../../gateway/local/index.ts';
import type { GatewayReady } from '../../gateway/local/index.ts';
import type { RunningChild } from './supervisor.ts';

/**
 * The curl command over https: the default certificates name `localhost`, so a loopback or
 * wildcard address is written as localhost for the name check to pass; with KONG_SSL_CERT
 * (`caFile` undefined) the client's own CAs apply.
 */
function tlsCurl(sslUrl: string, caFile: string | undefined): string {
  return `curl -si${caFile ? ` --cacert ${caFile}` : ''} ${tlsOrigin(sslUrl, caFile)}/v1/pets -H 'Authorization: Bearer <key>'`;
}

function tlsOrigin(sslUrl: string, caFile: string | undefined): string {
  const url = new URL(sslUrl);
  if (caFile && /^(127\.0\.0\.1|0\.0\.0\.0)$/.test(url.hostname)) url.hostname = 'localhost';
  return url.origin;
}

/**
 * The `Use it:` line, and an `Over TLS:` one when there is an https listener: with kong.yml's
 * https_only (DECK_ANIMAL_STORE_HTTPS_ONLY=true) plain HTTP answers 426, so `Use it:` is the
 * https command itself.
 */
function useIt(plainUrl: string, ssl: { url: string; caFile: string | undefined } | undefined, httpsOnly: boolean): string {
  const plain = `curl -si ${plainUrl}/v1/pets -H 'Authorization: Bearer <key>'`;
  if (!ssl) return `Use it:     ${plain}`;
  const overTls = tlsCurl(ssl.url, ssl.caFile);
  return httpsOnly ? `Use it:     ${overTls}` : `Use it:     ${plain}\nOver TLS:   ${overTls}`;
}

/** Where clients reach the gateway: its https origin under https_only (plain HTTP answers 426 or redirects), else its plain one. */
export function publicOrigin(g: GatewayReady): string {
  return g.httpsOnly && g.proxySslUrl ? tlsOrigin(g.proxySslUrl, g.proxyCaFile) : g.proxyUrl;
}

/** What `npm start` prints once both processes serve; every command in it uses the addresses in use. */
export function stackBanner(
  supervisorPid: number,
  backend: RunningChild<string>,
  gateway: RunningChild<GatewayReady>,
  portal?: RunningChild<string>,
): string {
  const g = gateway.ready;
  const ssl = g.proxySslUrl ? { url: g.proxySslUrl, caFile: g.proxyCaFile } : undefined;
  return `Animal Store API — local stack (supervisor pid ${supervisorPid}; Ctrl-C stops every process)
  proxy      ${g.proxyUrl}/v1   (data plane: nginx pid ${g.nginxPid}, Kong-compatible, ${g.configFile})${g.proxySslUrl ? `
  https      ${g.proxySslUrl}/v1   (TLS 1.2/1.3 and HTTP/2${g.proxyCaFile ? `; self-signed, trust ${g.proxyCaFile}` : ''}) the only scheme in production` : ''}
  admin API  ${g.adminUrl}   (control plane, pid ${gateway.pid}: Kong Admin API subset)${g.statusUrl ? `
  status API ${g.statusUrl}   (data plane: /status, /metrics)` : ''}
  backend    ${backend.ready}   (backend, pid ${backend.pid}: reached only through the gateway)${portal ? `
  portal     ${publicOrigin(g)}/portal/   (developer portal, pid ${portal.pid}, on ${portal.ready}: sign up for a key)` : ''}
  routes     ${g.routes.join('\n             ')}
  plugins    ${g.plugins.join(', ')}
  engine     ${g.engine}
  consumers  ${g.provisionedConsumers} provisioned through the Admin API
First key:  KONG_ADMIN_URL=${g.adminUrl} npm run consumers -- create --username alice --plan free
${useIt(g.proxyUrl, ssl, g.httpsOnly)}
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
${useIt(c.balancerUrl, c.httpsOnly ? c.balancerSsl : undefined, c.httpsOnly)}${usage}
Reload kong.yml without a restart:  kill -HUP ${c.controlPlanePid}${warning}`;
}
