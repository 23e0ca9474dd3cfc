import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GatewayOptions } from '../../gateway/local/index.ts';
import { request, type JsonResponse } from './backend.ts';
import { ManualClock } from './clock.ts';
import { startEchoUpstream, startTestGateway, writeConfig, type EchoUpstream, type TestGateway } from './gateway.ts';

export interface Fixture {
  gateway: TestGateway;
  upstream: EchoUpstream;
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<JsonResponse>;
  admin(path: string, init?: RequestInit & { json?: unknown }): Promise<JsonResponse>;
  dispose(): Promise<void>;
}

/**
 * A gateway running a small declarative config written for one test, in front of an echo
 * upstream. `yaml` may use ${UPSTREAM} for the upstream's URL.
 */
export async function startFixture(
  yaml: string,
  options: Partial<GatewayOptions> & { clock?: ManualClock; upstream?: EchoUpstream } = {},
): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'fixture-'));
  const upstream = options.upstream ?? (await startEchoUpstream());
  const configFile = writeConfig(dir, yaml.replaceAll('${UPSTREAM}', upstream.url));
  const gateway = await startTestGateway({ ...options, configFile, dir });
  return {
    gateway,
    upstream,
    call: (path, init) => request(`${gateway.proxyUrl}${path}`, init),
    admin: (path, init) => request(`${gateway.adminUrl}${path}`, init),
    async dispose() {
      await gateway.close();
      if (!options.upstream) await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
