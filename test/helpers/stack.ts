import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, type RunningBackend } from '../../backend/src/index.ts';
import { digestApiKey, generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';
import { ManualClock } from './clock.ts';
import { LOCAL_DECK_ENV, type GatewayOptions } from '../../gateway/local/index.ts';
import { startEchoUpstream, startTestGateway, type EchoUpstream, type TestGateway } from './gateway.ts';
import { GATEWAY_CONFIG } from './gateway-files.ts';
import { requestWithHost } from './host-request.ts';
import { REPO_ROOT } from './process.ts';

/** The host name our routes answer when the stack shares its gateway with another team. */
export const OUR_HOST = 'api.animal.store';
/** Another team's file (its own service, key-auth consumer and plugins; test/deck/shared-kong.test.ts). */
export const TEAM_INVENTORY_YML = join(REPO_ROOT, 'test/fixtures/team-inventory/kong.yml');
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
  /**
   * With `otherTeam`: team-inventory's upstream, and its consumer's key. Their key-auth stores the
   * key's SHA-256, as a team hashing keys as we do would: our key-auth finds it too.
   */
  otherTeam?: { upstream: EchoUpstream; key: string };
  dispose(): Promise<void>;
}

/**
 * Backend + local gateway running the real gateway/kong.yml, with a manual clock; `env` adds to
 * kong.yml's DECK_ variables, `node` to the data-plane node's settings. `otherTeam`: the gateway
 * also runs team-inventory's file (in front of an echo upstream), and our routes answer OUR_HOST
 * only, which `call` sends (a shared Kong, docs/shared-kong.md). `tls`: as production runs
 * kong.yml (DECK_ANIMAL_STORE_HTTPS_ONLY=true), with an https listener that `call` uses, trusting
 * the node's default certificates (docs/https.md).
 */
export async function startStack(
  options: { clock?: ManualClock; upstreamUrl?: string; env?: Record<string, string>; node?: GatewayOptions['node']; otherTeam?: boolean; tls?: boolean } = {},
): Promise<TestStack> {
  const dir = mkdtempSync(join(tmpdir(), 'stack-'));
  const backend = await startBackend({ host: '127.0.0.1', port: 0, dataDir: join(dir, 'backend') });
  const clock = options.clock ?? new ManualClock(Date.UTC(2030, 0, 1, 12, 0, 0));
  let inventory: EchoUpstream | undefined;
  const inventoryKey = generateApiKey();
  let shared: Record<string, string> = {};
  if (options.otherTeam) {
    // their 404s are their upstream's own
    inventory = await startEchoUpstream((req) =>
      req.url.startsWith('/inventory/missing')
        ? { status: 404, headers: { 'content-type': 'text/plain' }, body: 'no such item' }
        : { status: 200, headers: { 'content-type': 'application/json' }, body: '{"inventory":true}' },
    );
    shared = {
      DECK_ANIMAL_STORE_HOSTS: JSON.stringify([OUR_HOST]),
      DECK_INVENTORY_UPSTREAM_URL: inventory.url,
      DECK_INVENTORY_KEY: digestApiKey(inventoryKey),
    };
  }
  const gateway = await startTestGateway({
    configFile: options.otherTeam ? `${GATEWAY_CONFIG},${TEAM_INVENTORY_YML}` : GATEWAY_CONFIG,
    dir,
    clock,
    env: {
      ...LOCAL_DECK_ENV,
      DECK_ANIMAL_STORE_BACKEND_URL: options.upstreamUrl ?? backend.url,
      ...(options.tls ? { DECK_ANIMAL_STORE_HTTPS_ONLY: 'true' } : {}),
      ...shared,
      ...options.env,
    },
    ...(options.node || options.tls ? { node: { ...(options.tls ? { proxyListen: '127.0.0.1:0, 127.0.0.1:0 http2 ssl' } : {}), ...options.node } } : {}),
  });
  // the default certificates name localhost; the node listens on 127.0.0.1. undici imported here
  // only: a worker whose stacks are plain HTTP does not load its ~0.8 MB (docs/testing.md).
  const tls = options.tls
    ? new (await import('undici')).Agent({ connect: { ca: readFileSync(join(gateway.node.prefix, 'ssl', 'kong-default-ca.crt')), servername: 'localhost' } })
    : undefined;
  const proxyUrl = tls ? gateway.node.proxySslUrl! : gateway.proxyUrl;
  const stack: TestStack = {
    backend,
    gateway,
    clock,
    ...(inventory ? { otherTeam: { upstream: inventory, key: inventoryKey } } : {}),
    call(path, init = {}) {
      const { key, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
      if (options.otherTeam) return requestWithHost(`${gateway.proxyUrl}${path}`, OUR_HOST, { ...rest, headers });
      // Node's fetch takes an undici dispatcher (not in the DOM's RequestInit)
      return request(`${proxyUrl}${path}`, { ...rest, headers, ...(tls ? { dispatcher: tls } : {}) });
    },
    admin(path, init = {}) {
      return request(`${gateway.adminUrl}${path}`, init);
    },
    async provision(username, limits) {
      const consumer = await stack.admin('/consumers', { method: 'POST', json: { username, tags: ['petstore-consumer'] } });
      if (consumer.status !== 201) throw new Error(`cannot create ${username}: ${JSON.stringify(consumer.body)}`);
      // in our ACL group, as the CLI puts every consumer (kong.yml's animal-store-access)
      const group = await stack.admin(`/consumers/${username}/acls/animal-store`, { method: 'PUT', json: { tags: ['petstore-consumer'] } });
      if (group.status !== 200) throw new Error(`cannot put ${username} in the ACL group: ${JSON.stringify(group.body)}`);
      // as the CLI does: the key is generated here, Kong stores its digest (tagged hashed)
      const key = generateApiKey();
      const credential = await stack.admin(`/consumers/${username}/key-auth`, { method: 'POST', json: storedCredential(key, ['petstore-consumer']) });
      if (credential.status !== 201) throw new Error(`cannot create a key for ${username}: ${JSON.stringify(credential.body)}`);
      if (limits) {
        // tagged as the CLI tags its plan plugins (packages/provisioning/plan-plugin.ts)
        const plugin = await stack.admin(`/consumers/${username}/plugins`, { method: 'POST', json: { name: 'rate-limiting', config: limits, tags: ['petstore-consumer'] } });
        if (plugin.status !== 201) throw new Error(`cannot set limits: ${JSON.stringify(plugin.body)}`);
      }
      return key;
    },
    async dispose() {
      await tls?.close();
      await gateway.dispose();
      await backend.close();
      await inventory?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}
