import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { progress } from './load.ts';
import { childrenOf, reloadNginx, waitFor } from './processes.ts';
import { wrk, type WrkOptions } from './wrk.ts';

/** LuaJIT's own Lua modules (jit/p.lua…): Debian's luajit2 package, or OpenResty's bundle. */
function jitModulesDir(): string | undefined {
  for (const parent of ['/usr/share', '/usr/local/openresty/luajit/share']) {
    if (!existsSync(parent)) continue;
    const dir = readdirSync(parent).find((name) => name.startsWith('luajit-2.1') && existsSync(join(parent, name, 'jit', 'p.lua')));
    if (dir) return join(parent, dir) + '/';
  }
  return undefined;
}

/**
 * `npm run bench -- --profile`: where a node's workers spend the full chain's time, by LuaJIT's
 * sampling profiler (jit.p, 1 ms): the VM states (compiled, interpreted, C code, which includes
 * nginx itself, and the garbage collector) and, in each, the functions on top with their callers.
 * The node's rendered nginx.conf gets the profiler started in init_worker and stopped by a timer;
 * nginx re-reads it, wrk drives the chain, and the original conf is put back.
 */
export async function profileChain(options: { prefix: string; nginxPid: number; load: WrkOptions }): Promise<string> {
  const modules = jitModulesDir();
  if (!modules) return 'not measured: LuaJIT\'s jit/p.lua not found (Debian: apt-get install luajit2)';
  const conf = join(options.prefix, 'node', 'nginx.conf');
  const original = readFileSync(conf, 'utf8');
  const out = mkdtempSync(join(tmpdir(), 'animal-store-lua-profile-'));
  const seconds = options.load.durationSeconds;
  const start = `Kong.init_worker()
        package.path = package.path .. ";${modules}?.lua"
        local profiler = require "jit.p"
        profiler.start("vF2i1", "${out}/worker-" .. ngx.worker.pid() .. ".txt")
        ngx.timer.at(${seconds + 1}, function() profiler.stop() end)`;
  if (!original.includes('Kong.init_worker()')) throw new Error(`${conf}: no Kong.init_worker() to start the profiler after`);
  try {
    writeFileSync(conf, original.replace('Kong.init_worker()', start));
    await reloadNginx(options.nginxPid);
    progress(`LuaJIT profile of the full chain, ${seconds} s`);
    await wrk({ ...options.load, name: `${options.load.name} (profiled)` });
    const workers = childrenOf(options.nginxPid).length;
    // jit.p opens its file at start and writes it when stopped
    const written = () => readdirSync(out).filter((file) => statSync(join(out, file)).size > 0).length;
    await waitFor('the profiles', () => written() === workers, (seconds + 10) * 1000);
    return readdirSync(out)
      .sort()
      .map((file) => `${file.replace(/\.txt$/, '')}:\n${readFileSync(join(out, file), 'utf8').trimEnd()}`)
      .join('\n');
  } finally {
    writeFileSync(conf, original);
    if (existsSync(`/proc/${options.nginxPid}`)) await reloadNginx(options.nginxPid);
    rmSync(out, { recursive: true, force: true });
  }
}
