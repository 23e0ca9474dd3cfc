import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildGateway } from '../../scripts/tools/build-gateway.ts';
import { spawnNode, type SpawnedProcess } from '../helpers/process.ts';

export interface GatewayProcess {
  proc: SpawnedProcess;
  proxy: string;
  /** The https proxy listener, with `ssl`: the node's default certificates (<prefix>/node/ssl/). */
  proxySsl: string | undefined;
  admin: string;
  /** The data-plane node's nginx prefix. */
  nodePrefix: string;
  /** The control plane's process (this gateway's node process). */
  pid: number;
  /** The data-plane node's nginx master (its workers are its children). */
  nginxPid: number;
}

let built: Promise<void> | undefined;

/**
 * A gateway process as `npm start` runs it (its bundle, built once per run; the same Node flags), on
 * ports of its own. `ssl`: an https listener beside the http one (Kong's `ssl` flag, its TLS defaults);
 * `workers`: KONG_NGINX_WORKER_PROCESSES (default auto).
 */
export async function startGatewayProcess(
  dir: string,
  name: string,
  configFile: string,
  backendUrl: string,
  options: { ssl?: boolean; workers?: number } = {},
): Promise<GatewayProcess> {
  // Kong's flags, which the node wrote itself before KONG_PROXY_LISTEN took them: same figures
  const flags = 'reuseport backlog=16384';
  const listen = options.ssl === true ? `127.0.0.1:0 ${flags}, 127.0.0.1:0 ssl ${flags}` : `127.0.0.1:0 ${flags}`;
  built ??= buildGateway();
  await built;
  const proc = spawnNode(['--max-semi-space-size=4', 'gateway/local/cmd/start.built.mjs'], {
    KONG_DECLARATIVE_CONFIG: configFile,
    KONG_PROXY_LISTEN: listen,
    KONG_NGINX_WORKER_PROCESSES: String(options.workers ?? 'auto'),
    KONG_ADMIN_LISTEN: '127.0.0.1:0',
    KONG_STATUS_LISTEN: 'off',
    KONG_PREFIX: join(dir, `${name}-prefix`),
    GATEWAY_DATA_FILE: join(dir, `${name}.sqlite`),
    DECK_ANIMAL_STORE_BACKEND_URL: backendUrl,
    DECK_RATE_LIMIT_POLICY: 'local',
  });
  const [, proxy, proxySsl, admin] = await proc.waitFor(/proxy (\S+)(?: and (\S+))?, Admin API (\S+);/, 60_000);
  const nodePrefix = join(dir, `${name}-prefix`, 'node');
  const nginxPid = Number(readFileSync(join(nodePrefix, 'pids', 'nginx.pid'), 'utf8'));
  return { proc, proxy: proxy!, proxySsl, admin: admin!, nodePrefix, pid: proc.child.pid!, nginxPid };
}
