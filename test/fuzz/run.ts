import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, spawnNode, spawnTs, treeRssMb, type SpawnedProcess } from '../helpers/process.ts';
import { ensureSchemathesis, SCHEMATHESIS_VERSION, stateDir } from './schemathesis.ts';

/**
 * `npm run fuzz`: Schemathesis against gateway/openapi.yaml through the local gateway (kong.yml,
 * every plugin) with an enterprise key, every check it has. Backend and gateway run in processes
 * of their own, as in production, so the gateway's RSS is its own.
 */
const { values } = parseArgs({
  options: {
    'max-examples': { type: 'string', default: '200' },
    seed: { type: 'string' },
    workers: { type: 'string', default: '2' },
  },
});


const log = (line: string) => console.error(`[fuzz] ${line}`);
const st = await ensureSchemathesis(log);
const dir = mkdtempSync(join(tmpdir(), 'animal-store-fuzz-'));
const processes: SpawnedProcess[] = [];
let exitCode = 1;
try {
  const backend = spawnTs('backend/src/main.ts', [], { BACKEND_PORT: '0', DATA_DIR: join(dir, 'backend') });
  processes.push(backend);
  const [, backendUrl] = await backend.waitFor(/listening on (\S+)/);
  // as `npm start` runs it: plain JavaScript (prefuzz builds it), a 4 MB young generation
  const gateway = spawnNode(['--max-semi-space-size=4', 'gateway/local/cmd/start.built.mjs'], {
    KONG_PROXY_LISTEN: '127.0.0.1:0',
    KONG_ADMIN_LISTEN: '127.0.0.1:0',
    KONG_STATUS_LISTEN: 'off',
    KONG_PREFIX: join(dir, 'gateway'),
    GATEWAY_DATA_FILE: join(dir, 'gateway.sqlite'),
    DECK_ANIMAL_STORE_BACKEND_URL: backendUrl!,
  });
  processes.push(gateway);
  const [, proxyUrl, adminUrl] = await gateway.waitFor(/proxy (\S+), Admin API (\S+);/, 60_000);

  // Provisioned as an admin would: the consumers CLI, enterprise plan, limits the run never reaches.
  const cli = spawnTs('scripts/cli/consumers.ts', ['create', '--username', 'fuzz', '--plan', 'enterprise', '--minute', '10000000', '--day', '1000000000', '--json'], { KONG_ADMIN_URL: adminUrl! });
  const created = await cli.exited;
  if (created.code !== 0) throw new Error(`provisioning failed: ${cli.output()}`);
  const { key } = JSON.parse(cli.output().trim().split('\n').at(-1)!) as { key: string };

  // The gateway's memory: its control plane and every nginx process of its data plane.
  const gatewayPid = gateway.child.pid!;
  const idleRss = treeRssMb(gatewayPid);
  log(`schemathesis ${SCHEMATHESIS_VERSION}, ${values['max-examples']} examples per operation, against ${proxyUrl}/v1; gateway RSS at idle ${idleRss} MB`);
  const args = [
    'run', join(REPO_ROOT, 'gateway/openapi.yaml'),
    '--url', `${proxyUrl}/v1`,
    '--header', `Authorization: Bearer ${key}`,
    '--checks', 'all',
    '--max-examples', values['max-examples'],
    '--workers', values.workers,
    ...(values.seed ? ['--seed', values.seed] : []),
  ];
  const hooks = { SCHEMATHESIS_HOOKS: 'hooks', PYTHONPATH: join(REPO_ROOT, 'test/fuzz'), PYTHONDONTWRITEBYTECODE: '1' };
  // Schemathesis keeps its state (failing cases, replayed first next time) in .schemathesis/ of its
  // working directory: outside the repository, beside the venv.
  const fuzz = spawn(st, args, { stdio: 'inherit', cwd: stateDir(), env: { ...process.env, ...hooks } });
  exitCode = await new Promise<number>((resolve) => fuzz.once('exit', (code) => resolve(code ?? 1)));
  log(`gateway RSS: ${idleRss} MB at idle, ${treeRssMb(gatewayPid)} MB after the run`);
  const serverLogs = processes.map((p) => p.output()).join('').split('\n').filter((line) => /error|Error/.test(line));
  if (serverLogs.length) log(`backend/gateway logged ${serverLogs.length} error line(s), first: ${serverLogs.slice(0, 5).join(' | ')}`);
} finally {
  for (const p of processes.reverse()) p.child.kill('SIGTERM');
  await Promise.all(processes.map((p) => p.exited));
  rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
