import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findNginx } from '../../gateway/local/index.ts';

/**
 * Runs a Lua program in a throwaway nginx's init_by_lua (the program writes its figures to stdout
 * and exits nginx), so that the ngx.* functions and LuaJIT are the ones requests use on a node.
 * Resolves with the program's stdout.
 */
export async function runLuaInNginx(program: string, timeoutMs: number): Promise<string> {
  const nginx = findNginx();
  const prefix = mkdtempSync(join(tmpdir(), 'lua-in-nginx-'));
  try {
    writeFileSync(join(prefix, 'bench.lua'), program);
    const conf = [
      ...nginx.loadModules,
      'pid nginx.pid;',
      'error_log stderr warn;',
      'events {}',
      'http {',
      '  client_body_temp_path tmp; proxy_temp_path tmp; fastcgi_temp_path tmp; uwsgi_temp_path tmp; scgi_temp_path tmp;',
      `  init_by_lua_file ${join(prefix, 'bench.lua')};`,
      '}',
    ].join('\n');
    writeFileSync(join(prefix, 'nginx.conf'), conf);
    return await new Promise<string>((resolve, reject) => {
      const child = spawn(nginx.path, ['-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { cwd: prefix });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', reject);
      child.once('exit', (code) => {
        clearTimeout(timer);
        if (code === 0 && stdout.trim()) resolve(stdout.trim());
        else reject(new Error(`the measurement failed (nginx exited ${code}):\n${stderr}${stdout}`));
      });
    });
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
}
