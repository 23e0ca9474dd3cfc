import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATA_PLANE_DIR, GATEWAY_DIR, findNginx } from '../../gateway/local/index.ts';

/**
 * Runs a Lua program in a throwaway nginx's init_by_lua (the program writes its figures to stdout
 * and exits nginx), so that the ngx.* functions and LuaJIT are the ones requests use on a node.
 * Resolves with the program's stdout.
 */
async function runLuaInNginx(program: string, timeoutMs: number, httpDirectives: string[] = []): Promise<string> {
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
      ...httpDirectives.map((directive) => `  ${directive}`),
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

/**
 * CPU µs per call of each scenario (a Lua statement), run inside nginx as on a node: the least of
 * five rounds after a warm-up (LuaJIT has compiled the loop by then). `plugin` names a directory
 * of gateway/plugins whose modules load as kong.plugins.<plugin>.<module>, beside the data plane's
 * kong.* ('' for the data plane's alone); `setup` runs once before the timing (requires, fixtures, asserts that the scenarios
 * compute the right thing); `httpDirectives` go into the http block (a lua_shared_dict the
 * scenarios use, which init_by_lua may already read and write).
 */
export async function leastCpuPerCall<Name extends string>(
  plugin: string,
  setup: string,
  scenarios: Record<Name, string>,
  seconds: number,
  httpDirectives: string[] = [],
): Promise<Record<Name, number>> {
  const runs = Object.entries<string>(scenarios)
    .map(([name, body]) => `  { name = "${name}", run = function() ${body} end },`)
    .join('\n');
  const program = `
package.path = "${join(DATA_PLANE_DIR, 'lua')}/?.lua;${join(DATA_PLANE_DIR, 'lua')}/?/init.lua;" .. package.path
${plugin === '' ? '' : `table.insert(package.loaders, 2, function(name)
  local module = name:match("^kong%.plugins%.${plugin.replace(/-/g, '%-')}%.([%w_]+)$")
  if module then return assert(loadfile("${join(GATEWAY_DIR, 'plugins', plugin)}/" .. module .. ".lua")) end
end)`}
${setup.trim()}
local clock = os.clock
local function least_us(run)
  for _ = 1, 20000 do run() end
  local best = math.huge
  for _ = 1, 5 do
    local started, count = clock(), 0
    local deadline = started + ${seconds} / 5
    local now = started
    while now < deadline do
      for _ = 1, 1000 do run() end
      count = count + 1000
      now = clock()
    end
    best = math.min(best, (now - started) * 1e6 / count)
  end
  return best
end
local out = {}
for _, s in ipairs({
${runs}
}) do
  out[#out + 1] = string.format('"%s": %.4f', s.name, least_us(s.run))
end
io.stdout:write("{" .. table.concat(out, ", ") .. "}\\n")
io.stdout:flush()
os.exit(0)
`;
  return JSON.parse(await runLuaInNginx(program, seconds * 1000 * 10 + 30_000, httpDirectives)) as Record<Name, number>;
}

/** `--seconds N` from the command line (default 2); exits 2 with one line when N is not positive. */
export function secondsArgument(): number {
  const flag = process.argv.indexOf('--seconds');
  const seconds = flag > 0 ? Number(process.argv[flag + 1]) : 2;
  if (!(seconds > 0)) {
    console.error('error: --seconds takes a positive number');
    process.exit(2);
  }
  return seconds;
}
