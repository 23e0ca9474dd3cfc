import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The nginx that runs data-plane nodes, and what its configuration must load first. */
export interface NginxBinary {
  path: string;
  /** `load_module …;` lines for the main context (none for OpenResty, which has Lua built in). */
  loadModules: string[];
  flavor: 'openresty' | 'debian';
}

const DEBIAN_NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'];
const DEBIAN_MODULES = ['/usr/lib/nginx/modules/ndk_http_module.so', '/usr/lib/nginx/modules/ngx_http_lua_module.so'];

export class NginxNotFoundError extends Error {}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * `openresty` on PATH as it is, else Debian's nginx with the NDK and ngx_lua dynamic modules
 * (nginx-light + libnginx-mod-http-lua). Throws NginxNotFoundError with one line saying what to
 * install.
 */
export function findNginx(envPath: string | undefined = process.env.PATH): NginxBinary {
  const openresty = onPath('openresty', envPath);
  if (openresty) return { path: openresty, loadModules: [], flavor: 'openresty' };
  const nginx = DEBIAN_NGINX.find(executable) ?? onPath('nginx', envPath);
  const missing = DEBIAN_MODULES.filter((module) => !readable(module));
  if (!nginx || missing.length > 0) {
    const what = nginx ? `the ngx_lua module (${missing.join(', ')})` : 'nginx';
    throw new NginxNotFoundError(
      `the data plane needs nginx with ngx_lua, and ${what} is missing: ` +
        'apt-get install nginx-light libnginx-mod-http-lua (or put OpenResty\'s `openresty` on PATH)',
    );
  }
  return { path: nginx, loadModules: DEBIAN_MODULES.map((module) => `load_module ${module};`), flavor: 'debian' };
}
