import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../packages/node-runtime/free-port.js';

/** Debian's nginx-light, where installed: a reverse proxy a user would pick for a plain proxy. */
const NGINX = '/usr/sbin/nginx';

export interface NginxProxy {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The TLS directives of a node's rendered nginx.conf (<prefix>/nginx.conf): its certificates, its
 * suite's ciphers, protocols and DH group, session tickets, timeout and cache; not its
 * ssl_certificate_by_lua_block (Kong's, which plain nginx has not). An https listener as the node's.
 */
export function nodeTlsDirectives(nodePrefix: string): string[] {
  const conf = readFileSync(join(nodePrefix, 'nginx.conf'), 'utf8');
  return conf.split('\n').map((line) => line.trim()).filter((line) => /^ssl_\w+\s.*;$/.test(line));
}

export function nginxAvailable(): boolean {
  return spawnSync(NGINX, ['-v']).status === 0;
}

/**
 * nginx in front of the backend as the gateway's route is (/v1/ stripped), with the data-plane
 * node's worker count and the settings of its template that are not Kong's (multi_accept,
 * keepalive_requests, an HTTP/1.1 keepalive pool to the upstream, no access log): what the node's
 * nginx would cost with nothing of Kong in it. Master and workers, as the node runs; `pid` is the
 * master's (its workers are its children). Temp paths in dir: nothing outside it is written.
 */
export async function startNginxProxy(
  dir: string,
  backendUrl: string,
  workers: number,
  options: { emptyLuaPhases?: boolean; tlsDirectives?: string[] } = {},
): Promise<NginxProxy> {
  const port = await freePort();
  const upstream = new URL(backendUrl);
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'nginx.conf');
  // emptyLuaPhases: ngx_lua's own floor under Kong's runloop. The node's six *_by_lua hooks, each
  // doing nothing (the balancer only sets the peer): what entering Lua costs before any of Kong's code.
  const lua = options.emptyLuaPhases === true;
  const tls = options.tlsDirectives !== undefined;
  const modules = lua ? 'load_module /usr/lib/nginx/modules/ndk_http_module.so;\nload_module /usr/lib/nginx/modules/ngx_http_lua_module.so;\n' : '';
  const balancer = lua
    ? `server 0.0.0.1;
    balancer_by_lua_block { require("ngx.balancer").set_current_peer("${upstream.hostname}", ${upstream.port}) }`
    : `server ${upstream.hostname}:${upstream.port};`;
  const phases = lua
    ? ['rewrite', 'access', 'header_filter', 'body_filter', 'log'].map((phase) => `    ${phase}_by_lua_block { return }`).join('\n')
    : '';
  writeFileSync(conf, `${modules}daemon off;
worker_processes ${workers};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events {
  worker_connections 1024;
  multi_accept on;
}
http {
  access_log off;
  keepalive_requests 10000;
  ${tempPaths(dir)}
  upstream backend {
    ${balancer}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port}${tls ? ' ssl' : ''};
${(options.tlsDirectives ?? []).map((line) => `    ${line}`).join('\n')}
${phases}
    location /v1/ {
      proxy_pass http://backend/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`);
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  // https: up when it accepts a connection (fetch refuses the self-signed certificate)
  const ready = tls
    ? () => new Promise<void>((resolve, reject) => connect(port, '127.0.0.1', function (this: Socket) { this.destroy(); resolve(); }).once('error', reject))
    : async () => void (await fetch(`${url}/v1/pets?limit=1`));
  return { url, ...(await runNginx(dir, conf, ready)) };
}

/**
 * Starts Debian's nginx on `conf` (prefix `dir`, in the foreground: the conf says `daemon off`)
 * and waits until `ready` resolves; its pid and a stop that waits for it to exit.
 */
/** nginx's temp directories, all inside `dir`: nothing outside it is written. */
export function tempPaths(dir: string): string {
  return ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `${name}_temp_path ${dir}/${name};`).join('\n  ');
}

export async function runNginx(dir: string, conf: string, ready: () => Promise<void>): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = spawn(NGINX, ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let attempt = 0; ; attempt++) {
    try {
      await ready();
      break;
    } catch (error) {
      if (child.exitCode !== null || attempt > 100) throw new Error(`nginx did not start: ${stderr}${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGQUIT');
      await exited;
    },
  };
}
