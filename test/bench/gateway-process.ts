import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildGateway } from '../../scripts/tools/build-gateway.ts';
import { spawnNode, type SpawnedProcess } from '../helpers/process.ts';

export interface GatewayProcess {
  proc: SpawnedProcess;
  proxy: string;
  admin: string;
  /** The control plane's process (this gateway's node process). */
  pid: number;
  /** The data-plane node's nginx master (its workers are its children). */
  nginxPid: number;
}

let built: Promise<void> | undefined;

/** A gateway process as `npm start` runs it (its bundle, built once per run; the same Node flags), on ports of its own. */
export async function startGatewayProcess(dir: string, name: string, configFile: string, backendUrl: string): Promise<GatewayProcess> {
  built ??= buildGateway();
  await built;
  const proc = spawnNode(['--max-semi-space-size=4', 'gateway/local/cmd/start.built.mjs'], {
    KONG_DECLARATIVE_CONFIG: configFile,
    // Kong's flags, which the node wrote itself before KONG_PROXY_LISTEN took them: same figures
    KONG_PROXY_LISTEN: '127.0.0.1:0 reuseport backlog=16384',
    KONG_ADMIN_LISTEN: '127.0.0.1:0',
    KONG_STATUS_LISTEN: 'off',
    KONG_PREFIX: join(dir, `${name}-prefix`),
    GATEWAY_DATA_FILE: join(dir, `${name}.sqlite`),
    DECK_ANIMAL_STORE_BACKEND_URL: backendUrl,
    DECK_RATE_LIMIT_POLICY: 'local',
  });
  const [, proxy, admin] = await proc.waitFor(/proxy (\S+), Admin API (\S+);/, 60_000);
  const nginxPid = Number(readFileSync(join(dir, `${name}-prefix`, 'node', 'pids', 'nginx.pid'), 'utf8'));
  return { proc, proxy: proxy!, admin: admin!, pid: proc.child.pid!, nginxPid };
}
