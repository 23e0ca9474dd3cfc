import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NginxBinary } from './nginx-binary.ts';
import { writeFileAtomically } from './nginx-prefix.ts';
import { freePort } from '../../../packages/node-runtime/free-port.js';
import { answers, startServerProcess, type ServerProcess } from './server-process.ts';
import { ensureDefaultCertificates, ensureDhParams, defaultCertificatePaths, type CertificatePair } from './ssl-certificates.ts';

/**
 * The source address the balancer connects to the nodes from: a loopback address of its own, so
 * that the nodes can trust the balancer's X-Forwarded-For (trusted_ips) without trusting clients
 * that reach them on 127.0.0.1.
 */
export const BALANCER_SOURCE_ADDRESS = '127.0.0.2';

export interface BalancerOptions {
  /** Its nginx prefix (created when missing). */
  dir: string;
  host: string;
  /** 0: a free loopback port. */
  port: number;
  /** The data-plane nodes' proxy addresses, `host:port`. */
  upstreams: string[];
  /**
   * A TLS listener (0: a free loopback port) where the balancer terminates TLS with Kong's
   * default certificates and its ffdhe2048 group, made once in <dir>/ssl, and says so in
   * X-Forwarded-Proto.
   */
  ssl?: { host: string; port: number };
  nginx: NginxBinary;
  onLine?: (line: string) => void;
}

export interface RunningBalancer extends ServerProcess {
  url: string;
  port: number;
  /** With `ssl`: its https URL, and the PEM file clients trust (both default certificates). */
  sslUrl?: string;
  caFile?: string;
}

/**
 * Kong 3.9's TLS settings, as the nodes' template renders them (nginx-prefix.ts; docs/https.md).
 * The DHE suites need the ffdhe2048 group, Kong's ssl_dhparam (made once in <dir>/ssl, as on a
 * node): without it nginx silently offers none of them.
 */
function tlsSettings(dhparam: string): string {
  return `        ssl_protocols             TLSv1.2 TLSv1.3;
        ssl_ciphers               ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305;
        ssl_prefer_server_ciphers off;
        ssl_dhparam               ${dhparam};
        ssl_session_tickets       on;
        ssl_session_timeout       1d;
        ssl_session_cache         shared:SSL:10m;`;
}

/**
 * What nginx answers itself, in the API's Error shape with the edge plugin's codes and messages
 * (gateway/plugins/animal-store-edge/handler.lua, CODES), as compose's kong-lb
 * (deploy/nginx/kong-lb.conf): malformed HTTP, before any node sees the request, and the answers
 * of a balancer that no node answered (502, 503, 504), not nginx's HTML pages. An HTTP version
 * (505) or a transfer coding (501) nginx does not know is a malformed request from the client too:
 * 400, never a 5xx. The nodes' own answers are not intercepted (proxy_intercept_errors is off).
 * The pages are locations with a path, not named ones: nginx cannot redirect a request whose line
 * it could not read to a named location (500). They are not `internal` either, which would answer
 * a client asking for one nginx's HTML 404. Their prefix is one no team's route would own: every
 * path under it is the balancer's, on a Kong that several teams share (deploy/nginx/kong-lb.conf
 * uses the same).
 */
export const BALANCER_ERROR_PREFIX = '/_balancer-error-5f1c9a7e';
const BALANCER_ANSWERS: Array<{ statuses: string; status: number; code: string; message: string }> = [
  { statuses: '400 494 501 505', status: 400, code: 'bad_request', message: 'The request is malformed.' },
  { statuses: '405', status: 405, code: 'method_not_allowed', message: 'This method is not allowed here.' },
  { statuses: '408', status: 408, code: 'request_timeout', message: 'The request took too long to arrive.' },
  { statuses: '414', status: 414, code: 'uri_too_long', message: 'The request URI is too long.' },
  // no node answered: every one down or refusing (502), or too slow (504)
  { statuses: '502', status: 502, code: 'bad_gateway', message: 'The service behind the gateway could not be reached.' },
  { statuses: '503', status: 503, code: 'service_unavailable', message: 'The service is temporarily unavailable.' },
  { statuses: '504', status: 504, code: 'gateway_timeout', message: 'The service did not answer in time.' },
];
const ERROR_PAGES = [
  ...BALANCER_ANSWERS.map(({ statuses, status, code }) => `        error_page ${statuses} =${status} ${BALANCER_ERROR_PREFIX}/${code};`),
  ...BALANCER_ANSWERS.map(
    ({ status, code, message }) => `        location = ${BALANCER_ERROR_PREFIX}/${code} {
            default_type "application/json; charset=utf-8";
            return ${status} '${JSON.stringify({ code, message, status })}';
        }`,
  ),
].join('\n');

/**
 * The server block where TLS ends, as at compose's kong-lb (deploy/nginx/kong-lb.conf): the
 * nodes trust its X-Forwarded-Proto (https), as they trust its X-Forwarded-For.
 */
function tlsServer(pairs: CertificatePair[], dhparam: string, listen: string, location: string): string {
  const certificates = pairs.map((pair) => `        ssl_certificate           ${pair.cert};
        ssl_certificate_key       ${pair.key};`);
  return `

    server {
        listen ${listen} ssl http2 backlog=4096;
        client_max_body_size 0;
${certificates.join('\n')}
${tlsSettings(dhparam)}

${ERROR_PAGES}
${location}
    }`;
}

/**
 * A load balancer as a platform team puts in front of Kong nodes: Debian's nginx, round robin,
 * keepalive to the nodes, X-Forwarded-For/-Proto/-Host/-Port set for them, bodies and responses
 * streamed (the nodes buffer as Kong does). A node that fails a try is skipped for 2 s, unless
 * every node is (upstreamServers). X-Balancer-Upstream on each response names the node that
 * answered it.
 */
interface BalancerConf {
  dir: string;
  listen: string;
  ssl?: { listen: string; certificates: CertificatePair[]; dhparam: string };
  upstreams: string[];
}

/**
 * Each node twice, as compose's kong-lb lists them (deploy/nginx/kong-lb.conf): a primary that one
 * failed try marks down for 2 s, so that a node that is really gone costs one failed try (and one
 * error line) per 2 s rather than one per request; and a backup that is never marked down
 * (max_fails=0). nginx counts an error on a kept-alive connection that the node closed under it (a
 * graceful reload, a worker killed) as a failure of the node, though it grants the request another
 * try (ngx_http_upstream_next); when a node reloads it does so on every connection it kept. With
 * primaries alone, one such error per node marked every node down, and for 2 s every request was
 * nginx's 502 "no live upstreams" while every node was up. When every primary is down nginx tries
 * the backups (ngx_http_upstream_get_round_robin_peer), the same nodes, marked as tried afresh:
 * a node that is up answers, one that is gone is skipped as a failed try. max_fails=0 alone would
 * not do: a request that has tried every node once gets 502 too, and a node that is gone would
 * cost a failed connection on every other request.
 */
function upstreamServers(upstreams: string[]): string {
  return [
    ...upstreams.map((address) => `        server ${address} max_fails=1 fail_timeout=2s;`),
    ...upstreams.map((address) => `        server ${address} backup max_fails=0;`),
  ].join('\n');
}

function balancerConf(options: BalancerConf): string {
  const location = `        location / {
            proxy_pass http://data_plane_nodes;
            proxy_http_version 1.1;
            proxy_bind ${BALANCER_SOURCE_ADDRESS};
            proxy_request_buffering off;
            proxy_buffering off;
            proxy_pass_header Server;
            proxy_set_header Host              $http_host;
            proxy_set_header Upgrade           $http_upgrade;
            proxy_set_header Connection        $upstream_connection;
            proxy_set_header X-Forwarded-For   $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Host  $host;
            proxy_set_header X-Forwarded-Port  $server_port;
            # The nodes trust this balancer, so Kong would take a client's X-Forwarded-Path and
            # -Prefix as they came (kong/runloop/handler.lua 1234-1240) and send them upstream
            # (:1352-1353), where the backend builds its Link headers from the prefix. Empty, nginx
            # sends neither, and Kong derives both from the request, as for a client of its own.
            proxy_set_header X-Forwarded-Path   "";
            proxy_set_header X-Forwarded-Prefix "";
            # which node answered (for people and tests watching the round robin)
            add_header X-Balancer-Upstream $upstream_addr always;
        }`;
  const sslServer = options.ssl ? tlsServer(options.ssl.certificates, options.ssl.dhparam, options.ssl.listen, location) : '';
  const servers = upstreamServers(options.upstreams);
  return `# The local cluster's load balancer (gateway/local/cmd/balancer.ts): round robin over the nodes.
worker_processes 1;
pid ${join(options.dir, 'nginx.pid')};
error_log stderr notice;

events {
    worker_connections 4096;
}

http {
    access_log off;
    server_tokens off;
    client_body_temp_path ${join(options.dir, 'client_body_temp')};
    proxy_temp_path       ${join(options.dir, 'proxy_temp')};
    fastcgi_temp_path     ${join(options.dir, 'fastcgi_temp')};
    uwsgi_temp_path       ${join(options.dir, 'uwsgi_temp')};
    scgi_temp_path        ${join(options.dir, 'scgi_temp')};

    map $http_upgrade $upstream_connection {
        default upgrade;
        ''      '';
    }

    upstream data_plane_nodes {
${servers}
        keepalive 64;
    }

    server {
        listen ${options.listen} backlog=4096;
        client_max_body_size 0;

${ERROR_PAGES}
${location}
    }${sslServer}
}
`;
}

export async function startBalancer(options: BalancerOptions): Promise<RunningBalancer> {
  mkdirSync(options.dir, { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const port = options.port || (await freePort(options.host));
    const listen = `${options.host}:${port}`;
    const sslPort = options.ssl && (options.ssl.port || (await freePort(options.ssl.host)));
    const sslListen = options.ssl && `${options.ssl.host}:${sslPort}`;
    const confPath = join(options.dir, 'nginx.conf');
    const ssl = sslListen
      ? { listen: sslListen, certificates: await ensureDefaultCertificates(options.dir), dhparam: await ensureDhParams(options.dir) }
      : undefined;
    const conf = balancerConf({ dir: options.dir, listen, ...(ssl ? { ssl } : {}), upstreams: options.upstreams });
    writeFileAtomically(confPath, conf);
    try {
      const server = await startServerProcess({
        name: `the load balancer (nginx) on ${listen}`,
        command: options.nginx.path,
        args: ['-p', `${options.dir}/`, '-c', confPath, '-g', 'daemon off;'],
        cwd: options.dir,
        ready: async (logs) => logs.some((line) => line.includes('start worker process')) && (await answers(options.host, port)),
        onLine: options.onLine,
      });
      const tls = sslListen ? { sslUrl: `https://${sslListen}`, caFile: defaultCertificatePaths(options.dir).trust } : {};
      return Object.assign(server, { url: `http://${listen}`, port, ...tls });
    } catch (error) {
      // a port picked here and taken meanwhile: pick again; a port that was asked for stays taken
      const busy = /bind\(\) to \S+:(\d+) failed \(98: Address already in use\)/.exec((error as Error).message)?.[1];
      const picked = [...(options.port ? [] : [port]), ...(options.ssl?.port === 0 ? [sslPort] : [])];
      if (attempt >= 5 || busy === undefined || !picked.includes(Number(busy))) throw error;
    }
  }
}
