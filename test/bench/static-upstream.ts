import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../packages/node-runtime/free-port.js';
import { runNginx, tempPaths } from './nginx-proxy.ts';

export interface StaticUpstream {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * One nginx worker answering `GET /pets` (any query) with `body` as JSON, from memory: an upstream
 * that costs a few µs a request and never varies, so that a gateway's CPU per request measured in
 * front of it is the gateway's alone (the Node backend's own timing moves the gateway's batching).
 */
export async function startStaticUpstream(dir: string, body: string): Promise<StaticUpstream> {
  if (body.includes('$')) throw new Error('the static upstream\'s body cannot hold "$" (an nginx variable)');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  const quoted = body.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  writeFileSync(conf, `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events {
  worker_connections 1024;
}
http {
  access_log off;
  keepalive_requests 100000;
  ${tempPaths(dir)}
  server {
    listen 127.0.0.1:${port};
    location = /pets {
      default_type application/json;
      return 200 '${quoted}';
    }
  }
}
`);
  const url = `http://127.0.0.1:${port}`;
  const ready = async () => {
    const response = await fetch(`${url}/pets`);
    if (!response.ok || (await response.text()) !== body) throw new Error(`answered ${response.status}`);
  };
  return { url, ...(await runNginx(dir, conf, ready)) };
}
