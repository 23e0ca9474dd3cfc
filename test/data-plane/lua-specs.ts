import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findNginx } from '../../gateway/local/data-plane-entry.ts';
import { DATA_PLANE_DIR } from '../../gateway/local/data-plane-entry.ts';

/** test/data-plane/lua: busted specs of the data plane's Lua (*_spec.lua). */
export const LUA_SPECS_DIR = fileURLToPath(new URL('./lua/', import.meta.url));

/**
 * Runs the busted specs inside nginx, as Kong runs its unit tests with `resty`: ngx.re,
 * ngx.sha1_bin and the shared dicts are ngx_lua's own. busted runs in init_by_lua and exits
 * nginx with its result (no request context: PDK request functions are covered by the
 * data-plane tests against real requests).
 */
export async function runLuaSpecs(): Promise<{ code: number | null; output: string }> {
  const nginx = findNginx();
  const prefix = mkdtempSync(join(tmpdir(), 'lua-specs-'));
  try {
    const lua = join(DATA_PLANE_DIR, 'lua');
    const conf = [
      ...nginx.loadModules,
      'pid pids/nginx.pid;',
      'error_log stderr warn;',
      'events {}',
      'http {',
      `  lua_package_path '${LUA_SPECS_DIR}?.lua;${lua}/?.lua;${lua}/?/init.lua;;';`,
      '  lua_shared_dict kong 1m;',
      '  lua_shared_dict prometheus_metrics 1m;',
      '  client_body_temp_path tmp; proxy_temp_path tmp; fastcgi_temp_path tmp; uwsgi_temp_path tmp; scgi_temp_path tmp;',
      '  init_by_lua_block {',
      `    arg = { [0] = "busted", "--output=TAP", "--pattern=_spec", "--directory=${LUA_SPECS_DIR}", "." }`,
      '    require("busted.runner")({ standalone = false })',
    '    os.exit(0)',
      '  }',
      '}',
    ].join('\n');
    writeFileSync(join(prefix, 'nginx.conf'), conf);
    return await new Promise((resolve, reject) => {
      const child = spawn(nginx.path, ['-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { cwd: prefix });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('error', reject);
      // 'close', not 'exit': after nginx exits, its last output may still be in the pipes
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
}

// `npm run test:lua`
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { code, output } = await runLuaSpecs();
  process.stdout.write(output);
  process.exit(code ?? 1);
}
