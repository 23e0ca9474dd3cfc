import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PluginDescription } from '../control-plane/schema/plugins/plugin-schema.ts';
import { findNginx, type NginxBinary } from './nginx-binary.ts';
import { DATA_PLANE_DIR, preparePrefix, renderTemplate, withDefaults, writeFileAtomically } from './nginx-prefix.ts';

/** What the data plane's Lua reports: its plugins, and the LuaJIT that runs them. */
export interface DataPlaneDescription {
  /** `jit.version`, as Kong's GET / reports lua_version. */
  lua_version: string;
  plugins: PluginDescription[];
}

class DescribePluginsError extends Error {}

/**
 * Asks the data plane's Lua about `plugins` (bundled names and custom ones under `pluginsDir`):
 * nginx runs once with the describe configuration, whose init_by_lua loads each handler and
 * schema.lua, writes plugins.json and exits. A plugin that cannot be described comes back with
 * `error`; the call itself fails only when nginx or the describe step do.
 */
export async function describePlugins(options: {
  plugins: string[];
  pluginsDir: string | null;
  nginx?: NginxBinary;
  timeoutMs?: number;
}): Promise<DataPlaneDescription> {
  const nginx = options.nginx ?? findNginx();
  const prefix = mkdtempSync(join(tmpdir(), 'describe-plugins-'));
  try {
    const settings = withDefaults({ plugins: options.plugins, pluginsDir: options.pluginsDir });
    await preparePrefix(prefix, settings, nginx);
    mkdirSync(join(prefix, 'pids'), { recursive: true });
    const template = readFileSync(join(DATA_PLANE_DIR, 'describe.conf'), 'utf8');
    const lua = join(DATA_PLANE_DIR, 'lua');
    const conf = renderTemplate(
      template,
      {
        load_modules: nginx.loadModules,
        lua_package_path: [`${prefix}/lua/?.lua`, `${prefix}/lua/?/init.lua`, `${lua}/?.lua`, `${lua}/?/init.lua`, ''].join(';') + ';',
      },
      {},
    );
    const confPath = join(prefix, 'describe.conf');
    writeFileAtomically(confPath, conf);

    const output = await new Promise<{ code: number | null; text: string }>((resolve, reject) => {
      const child = spawn(nginx.path, ['-p', `${prefix}/`, '-c', confPath, '-g', 'daemon off;'], { cwd: prefix, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10_000);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, text });
      });
    });
    if (output.code !== 0) {
      const line = output.text.split('\n').find((l) => /describe:|\[emerg\]/.test(l)) ?? output.text.trim();
      throw new DescribePluginsError(`describing plugins failed: ${line}`);
    }
    const described = JSON.parse(readFileSync(join(prefix, 'plugins.json'), 'utf8')) as DataPlaneDescription;
    // Debian's lua-cjson writes an empty Lua table as {}: no phases is an empty list
    for (const entry of described.plugins) if (entry.phases && !Array.isArray(entry.phases)) entry.phases = [];
    return described;
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
}
