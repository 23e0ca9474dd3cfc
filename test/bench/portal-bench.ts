import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { CONSUMER_GROUP, generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';
import { freePort } from '../../packages/node-runtime/free-port.js';
import { PortalBrowser } from '../helpers/portal.ts';
import { REPO_ROOT, spawnNode, type SpawnedProcess } from '../helpers/process.ts';
import { adminRequest } from './admin.ts';
import type { Figure } from './gateway-bench.ts';
import { startGatewayProcess } from './gateway-process.ts';
import { progress, type LoadResult } from './load.ts';
import { memoryOf, treeCpuMicros } from './processes.ts';
import { startSeededBackend } from './seed.ts';

/** Issue 32's figure: the portal's pages under 20 signed-in sessions, beside the API at the same concurrency. */
const SESSIONS = 20;
const WRK = '/usr/bin/wrk';
const PASSWORD = 'correct horse battery staple';

export interface PortalBenchResult {
  runs: LoadResult[];
  figures: Figure[];
}

/**
 * gateway/kong.yml with the portal's address written in and the portal service's per-address
 * limits (120 a minute) taken off: the bench's sessions all come from 127.0.0.1, and a 429 is
 * not the page measured. Everything else of the chain stays.
 */
function benchConfig(dir: string, portalUrl: string): string {
  const config = parse(readFileSync(join(REPO_ROOT, 'gateway/kong.yml'), 'utf8').replaceAll('${{ env "DECK_ANIMAL_STORE_PORTAL_URL" }}', portalUrl)) as {
    services: Array<{ name: string; plugins?: Array<{ name: string }> }>;
  };
  const portal = config.services.find((service) => service.name === 'animal-store-portal');
  if (!portal) throw new Error('gateway/kong.yml has no animal-store-portal service');
  portal.plugins = (portal.plugins ?? []).filter((plugin) => plugin.name !== 'rate-limiting');
  const file = join(dir, 'kong.yml');
  writeFileSync(file, stringify(config));
  return [join(REPO_ROOT, 'gateway/platform/kong.yml'), file].join(',');
}

/** wrk's Lua: each request takes the next session's cookies in turn; `done` reports one JSON line (µs). */
function wrkScript(dir: string, name: string, headerSets: Array<Record<string, string>>): string {
  const lua = (value: string) => JSON.stringify(value);
  const sets = headerSets.map((headers) => `{ ${Object.entries(headers).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(', ')} }`);
  const file = join(dir, `${name}.lua`);
  writeFileSync(
    file,
    `local sets = { ${sets.join(',\n')} }
local next_set = 0
request = function()
  next_set = next_set % #sets + 1
  return wrk.format("GET", nil, sets[next_set])
end
done = function(summary, latency)
  local e = summary.errors
  io.write(string.format('\\n{"requests":%d,"duration_us":%d,"errors":%d,"status":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
`,
  );
  return file;
}

interface PortalLoadResult extends LoadResult {
  /** The Admin API's process (the gateway's control plane): what the dashboard's reads cost there, µs per request. */
  adminCpuMicrosPerRequest: number;
}

async function runWrk(
  name: string,
  url: string,
  script: string,
  durationSeconds: number,
  cpuOfPid: number,
  adminPid: number,
): Promise<PortalLoadResult> {
  progress(`${name}: ${SESSIONS} connections for ${durationSeconds}s`);
  const cpuBefore = treeCpuMicros(cpuOfPid);
  const adminBefore = treeCpuMicros(adminPid);
  const args = ['-t1', `-c${SESSIONS}`, `-d${durationSeconds}s`, '--timeout', '10s', '-s', script, url];
  const { stdout } = await promisify(execFile)(WRK, args);
  const cpu = treeCpuMicros(cpuOfPid) - cpuBefore;
  const adminCpu = treeCpuMicros(adminPid) - adminBefore;
  const line = /^\{"requests".*\}$/m.exec(stdout)?.[0];
  if (!line) throw new Error(`wrk printed no report: ${stdout}`);
  type Report = { requests: number; duration_us: number; errors: number; status: number; p50_us: number; p99_us: number };
  const report = JSON.parse(line) as Report;
  const result: PortalLoadResult = {
    name,
    rps: Math.round(report.requests / (report.duration_us / 1e6)),
    p50: Math.round(report.p50_us / 10) / 100,
    p99: Math.round(report.p99_us / 10) / 100,
    errors: report.errors,
    non2xx: report.status,
    requests: report.requests,
    cpuMicrosPerRequest: Math.round(cpu / Math.max(report.requests, 1)),
    adminCpuMicrosPerRequest: Math.round(adminCpu / Math.max(report.requests, 1)),
  };
  progress(`${name}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.cpuMicrosPerRequest} µs CPU/request`);
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`${name}: ${result.non2xx} answers other than 2xx/3xx, ${result.errors} errors: not the path measured`);
  return result;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * The portal's production bundle (`npm run build:portal`, as its image runs it, on SQLite) behind a
 * gateway process on gateway/kong.yml; 20 accounts signed up, then wrk with 20 connections, each
 * request carrying the next account's session: the dashboard (`GET /portal/`, which reads the
 * account's consumer, keys and plan from the Admin API) beside `GET /v1/pets?limit=20` with a key
 * through the full chain, in alternating rounds; the portal's RSS read from /proc before and after.
 */
export async function benchPortal(options: { durationSeconds: number; rounds: number }): Promise<PortalBenchResult> {
  const { durationSeconds, rounds } = options;
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-portal-bench-'));
  const processes: SpawnedProcess[] = [];
  try {
    progress('building the portal bundle (npm run build:portal)');
    await promisify(execFile)('npm', ['run', 'build:portal'], { cwd: REPO_ROOT });
    const { url: backendUrl } = await startSeededBackend(dir, processes);

    const portalPort = await freePort();
    const gateway = await startGatewayProcess(dir, 'gateway', benchConfig(dir, `http://127.0.0.1:${portalPort}`), backendUrl);
    processes.push(gateway.proc);
    const portal = spawnNode(['dist/portal/server/main.mjs'], {
      NODE_ENV: 'production',
      PORTAL_PORT: String(portalPort),
      PORTAL_DATA_DIR: join(dir, 'portal'),
      PORTAL_DATABASE_URL: '',
      PORTAL_COOKIE_SECRET: 'the bench secret, at least thirty-two characters',
      PORTAL_SIGNUP: 'open',
      KONG_ADMIN_URL: gateway.admin,
      KONG_STATUS_URL: '',
    });
    processes.push(portal);
    const [, portalUrl] = await portal.waitFor(/listening on (\S+)/);
    const portalPid = portal.child.pid!;
    const idle = memoryOf([portalPid]);

    progress(`signing up ${SESSIONS} accounts`);
    const sessions: Array<Record<string, string>> = [];
    for (let i = 0; i < SESSIONS; i++) {
      const browser = new PortalBrowser(portalUrl!, `198.18.0.${i + 1}`);
      await browser.get('/portal/signup');
      const page = await browser.post('/portal/signup', { email: `bench${i}@example.com`, name: `Bench ${i}`, password: PASSWORD });
      if (page.status !== 201) throw new Error(`sign-up ${i}: ${page.status}`);
      sessions.push({ Cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ') });
    }
    // the API's side: a consumer as the provisioning scripts make one, on a plan that never runs out
    await adminRequest('POST', `${gateway.admin}/consumers`, { username: 'bench' });
    await adminRequest('POST', `${gateway.admin}/consumers/bench/acls`, { group: CONSUMER_GROUP });
    const key = generateApiKey();
    await adminRequest('POST', `${gateway.admin}/consumers/bench/key-auth`, storedCredential(key, []));
    await adminRequest('POST', `${gateway.admin}/consumers/bench/plugins`, { name: 'rate-limiting', config: { minute: 1e9, day: 1e10 } });

    const scenarios = [
      { name: `portal dashboard GET /portal/ via gateway, ${SESSIONS} sessions`, url: `${gateway.proxy}/portal/`, script: wrkScript(dir, 'portal', sessions), cpuOf: portalPid },
      { name: `API GET /v1/pets?limit=20 via gateway, ${SESSIONS} conns`, url: `${gateway.proxy}/v1/pets?limit=20`, script: wrkScript(dir, 'api', [{ Authorization: `Bearer ${key}` }]), cpuOf: gateway.nginxPid },
    ];
    for (const s of scenarios) await runWrk(`${s.name} (warm-up)`, s.url, s.script, 2, s.cpuOf, gateway.pid);
    const perScenario: PortalLoadResult[][] = scenarios.map(() => []);
    // RSS after the warm-up and after each round: whether the heap grown under load levels off
    const rssByRound = [memoryOf([portalPid]).rssMb];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const s = scenarios[i]!;
        perScenario[i]!.push(await runWrk(`${s.name} (round ${round + 1} of ${rounds})`, s.url, s.script, durationSeconds, s.cpuOf, gateway.pid));
      }
      rssByRound.push(memoryOf([portalPid]).rssMb);
    }
    const after = memoryOf([portalPid]);
    // latencies of the median round by p99, as the gateway bench reports its rounds
    const medianRound = (results: PortalLoadResult[], i: number) => ({
      ...[...results].sort((a, b) => a.p99 - b.p99)[Math.floor(results.length / 2)]!,
      name: scenarios[i]!.name,
    });
    const [portalRun, apiRun] = perScenario.map(medianRound) as [PortalLoadResult, PortalLoadResult];
    const portalP99 = median(perScenario[0]!.map((r) => r.p99));
    const apiP99 = median(perScenario[1]!.map((r) => r.p99));
    return {
      runs: [portalRun, apiRun].map(({ adminCpuMicrosPerRequest: _, ...run }) => run),
      figures: [
        { name: `portal dashboard p99 ms, ${SESSIONS} signed-in sessions (median of ${rounds})`, value: portalP99 },
        { name: `API GET /v1/pets p99 ms, ${SESSIONS} connections (median of ${rounds})`, value: apiP99 },
        { name: 'portal dashboard p99 / API p99', value: Math.round((portalP99 / apiP99) * 10) / 10 },
        { name: 'CPU µs per dashboard page: portal process / Admin API (control plane)', value: `${portalRun.cpuMicrosPerRequest} / ${portalRun.adminCpuMicrosPerRequest}` },
        { name: 'portal process RSS MB: idle after start / after the load', value: `${idle.rssMb} / ${after.rssMb}` },
        { name: 'portal process PSS MB after the load', value: after.pssMb },
        { name: 'portal process RSS MB after the warm-up, then after each round', value: rssByRound.join(' / ') },
      ],
    };
  } finally {
    for (const proc of processes.reverse()) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
