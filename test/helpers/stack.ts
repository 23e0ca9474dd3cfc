import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, type RunningBackend } from '../../backend/src/index.ts';
import { generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';
import { ManualClock } from './clock.ts';
import { LOCAL_RATE_LIMIT_ENV, type GatewayOptions } from '../../gateway/local/index.ts';
import { KONG_YML, startTestGateway, type TestGateway } from './gateway.ts';
import { request, type JsonResponse } from './backend.ts';

export interface TestStack {
  backend: RunningBackend;
  gateway: TestGateway;
  clock: ManualClock;
  /** A request to the gateway's proxy: `path` starts with /v1 for the public API. */
  call(path: string, init?: RequestInit & { json?: unknown; key?: string }): Promise<JsonResponse>;
  admin(path: string, init?: RequestInit & { json?: unknown }): Promise<JsonResponse>;
  /**
   * Creates a consumer with a key and, optionally, a plan's limits, through the Admin API, as the
   * CLI does (packages/provisioning/api-keys.ts): returns the key; Kong holds only its digest.
   */
  provision(username: string, limits?: { minute?: number; day?: number; second?: number }): Promise<string>;
  dispose(): Promise<void>;
}

/**
 * Backend + local gateway running the real gateway/kong.yml, with a manual clock; `env` adds to
 * kong.yml's DECK_ variables, `node` to the data-plane node's settings.
 */
export async function startStack(
  options: { clock?: ManualClock; upstreamUrl?: string; env?: Record<string, string>; node?: GatewayOptions['node'] } = {},
): Promise<TestStack> {
  const dir = mkdtempSync(join(tmpdir(), 'stack-'));
  const backend = await startBackend({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'backend') });
  const clock = options.clock ?? new ManualClock(Date.UTC(2030, 0, 1, 12, 0, 0));
  const gateway = await startTestGateway({
    configFile: KONG_YML,
    dir,
    clock,
    env: { ...LOCAL_RATE_LIMIT_ENV, DECK_ANIMAL_STORE_BACKEND_URL: options.upstreamUrl ?? backend.url, ...options.env },
    ...(options.node ? { node: options.node } : {}),
  });
  const stack: TestStack = {
    backend,
    gateway,
    clock,
    call(path, init = {}) {
      const { key, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
      return request(`${gateway.proxyUrl}${path}`, { ...rest, headers });
    },
    admin(path, init = {}) {
      return request(`${gateway.adminUrl}${path}`, init);
    },
    async provision(username, limits) {
      const consumer = await stack.admin('/consumers', { method: 'POST', json: { username, tags: ['petstore-consumer'] } });
      if (consumer.status !== 201) throw new Error(`cannot create ${username}: ${JSON.stringify(consumer.body)}`);
      // as the CLI does: the key is generated here, Kong stores its digest (tagged hashed)
      const key = generateApiKey();
      const credential = await stack.admin(`/consumers/${username}/key-auth`, { method: 'POST', json: storedCredential(key, ['petstore-consumer']) });
      if (credential.status !== 201) throw new Error(`cannot create a key for ${username}: ${JSON.stringify(credential.body)}`);
      if (limits) {
        const plugin = await stack.admin(`/consumers/${username}/plugins`, { method: 'POST', json: { name: 'rate-limiting', config: limits } });
        if (plugin.status !== 201) throw new Error(`cannot set limits: ${JSON.stringify(plugin.body)}`);
      }
      return key;
    },
    async dispose() {
      await gateway.dispose();
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}
