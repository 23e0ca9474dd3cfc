import test from 'ava';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';
import { request, type JsonResponse } from './json-request.ts';
import { pollUntil } from './poll.ts';
import type * as LocalStack from './stack.ts';

/** What the portable end-to-end suite needs from a deployment: the proxy and the Admin API. */
export interface Target {
  description: string;
  /** The Admin API's base URL, for the provisioning CLI (KONG_ADMIN_URL). */
  adminUrl: string;
  call(path: string, init?: RequestInit & { json?: unknown; key?: string }): Promise<JsonResponse>;
  admin(path: string, init?: RequestInit & { json?: unknown }): Promise<JsonResponse>;
  /**
   * A consumer with a key (and limits): created through the Admin API as the CLI creates them (the
   * key's digest stored, tagged key-hash:sha256), removed by dispose(). Returns the key.
   */
  provision(username: string, limits?: { minute?: number; day?: number }): Promise<string>;
  /**
   * Runs `writes` (Admin API calls, the CLI) and resolves once the data planes run them. The local
   * gateway answers a write once its nodes run it: nothing to wait for. Kong in hybrid mode
   * pushes configuration from a timer (db_update_frequency, kong/clustering/control_plane.lua),
   * after the Admin API answered: the writes are visible once every data plane reports a
   * configuration hash other than its hash before them (GET /clustering/data-planes), bounded.
   */
  writing<T>(writes: () => Promise<T>): Promise<T>;
  dispose(): Promise<void>;
}

/** Each data plane's configuration hash, by node id, as the control plane reports them. */
async function dataPlaneHashes(adminUrl: string): Promise<Map<string, string>> {
  const listed = await request(`${adminUrl}/clustering/data-planes`);
  if (listed.status !== 200) throw new Error(`GET /clustering/data-planes: HTTP ${listed.status}`);
  const nodes = (listed.body as { data: Array<{ id: string; config_hash: string }> }).data;
  return new Map(nodes.map((node) => [node.id, node.config_hash]));
}

/**
 * The counter settings of kong.yml's fallback rate-limiting plugin (tag animal-store, no consumer,
 * no route): plan plugins count where it counts, as the CLI's do (packages/provisioning/counter-settings.ts).
 */
async function counterSettings(adminUrl: string): Promise<Record<string, unknown>> {
  const listed = await request(`${adminUrl}/plugins?tags=animal-store`);
  type Listed = { data?: Array<{ name: string; consumer: unknown; route: unknown; config: Record<string, unknown> }> };
  const plugins = (listed.body as Listed).data ?? [];
  const fallback = plugins.find((plugin) => plugin.name === 'rate-limiting' && !plugin.consumer && !plugin.route);
  if (!fallback) return {};
  const { policy, fault_tolerant, redis, sync_rate } = fallback.config;
  return policy === 'redis' ? { policy, fault_tolerant, redis, sync_rate } : { policy, fault_tolerant };
}

type LocalKind = 'plain' | 'shared' | 'tls';

/**
 * The local stacks this worker runs, by kind, with the number of targets using each: the portable
 * files that run in one worker (a worker group, contract-over-tls, contract-on-shared-kong) share
 * one stack, as they share a deployment, each with consumers of its own; the last to dispose of
 * its target stops it.
 */
const localStacks = new Map<LocalKind, { started: Promise<LocalStack.TestStack>; users: number }>();

async function startLocalStack(kind: LocalKind): Promise<LocalStack.TestStack> {
  // Imported here, as a bundle of its own (built by ava.config.js, or here when stale), by URL so
  // that esbuild does not bundle it in: against a running deployment the workers load neither
  // the backend nor the gateway, ~1 CPU-s a test file.
  const { bundleModule } = (await import(new URL('../../scripts/tools/module-bundles.js', import.meta.url).href)) as {
    bundleModule: (entry: string) => Promise<string>;
  };
  const stackBundle = await bundleModule(fileURLToPath(new URL('./stack.ts', import.meta.url)));
  const { startStack } = (await import(pathToFileURL(stackBundle).href)) as typeof LocalStack;
  return startStack(kind === 'shared' ? { otherTeam: true } : { tls: kind === 'tls' });
}

async function localTarget(kind: LocalKind): Promise<Target> {
  let entry = localStacks.get(kind);
  if (!entry) {
    entry = { started: startLocalStack(kind), users: 0 };
    localStacks.set(kind, entry);
    // a start that failed is not kept for the next file
    entry.started.catch(() => localStacks.delete(kind));
  }
  entry.users++;
  const stack = await entry.started;
  const using = entry;
  const description = kind === 'shared' ? 'local stack shared with team-inventory' : kind === 'tls' ? 'local stack over TLS, https only' : 'local stack';
  let disposed = false;
  return {
    ...stack,
    description,
    adminUrl: stack.gateway.adminUrl,
    writing: (writes) => writes(),
    async dispose() {
      if (disposed) return;
      disposed = true;
      if (--using.users > 0) return;
      localStacks.delete(kind);
      await stack.dispose();
    },
  };
}

/**
 * GATEWAY_URL (+ KONG_ADMIN_URL) set: a running deployment, e.g. `docker compose up -d` with real
 * Kong; an https one with a self-signed certificate needs ANIMAL_STORE_CA_FILE, the PEM to trust.
 * Unset: the local stack (backend + local gateway running gateway/kong.yml), started here;
 * with E2E_SHARED_KONG=1, with another team's file synced in and our hosts set; with E2E_TLS=1,
 * https only as production runs it, every call over TLS.
 */
export async function startTarget(): Promise<Target> {
  const gatewayUrl = process.env.GATEWAY_URL;
  if (!gatewayUrl) {
    // E2E_SHARED_KONG=1: the same suite on a gateway shared with another team (docs/shared-kong.md)
    const shared = process.env.E2E_SHARED_KONG === '1';
    const tls = process.env.E2E_TLS === '1';
    return localTarget(shared ? 'shared' : tls ? 'tls' : 'plain');
  }
  const caFile = process.env.ANIMAL_STORE_CA_FILE;
  // undici (~0.1-0.15 CPU-s to import) only for a certificate to trust
  const dispatcher = caFile ? new (await import('undici')).Agent({ connect: { ca: readFileSync(caFile) } }) : undefined;
  const adminUrl = (process.env.KONG_ADMIN_URL ?? 'http://127.0.0.1:8001').replace(/\/+$/, '');
  const run = randomBytes(4).toString('hex');
  const created: string[] = [];
  const target: Target = {
    description: `${gatewayUrl} (admin ${adminUrl})`,
    adminUrl,
    call(path, init = {}) {
      const { key, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
      // Node's fetch takes an undici dispatcher (not in the DOM's RequestInit)
      return request(`${gatewayUrl.replace(/\/+$/, '')}${path}`, { ...rest, headers, ...(dispatcher ? { dispatcher } : {}) });
    },
    admin(path, init = {}) {
      return request(`${adminUrl}${path}`, init);
    },
    async writing(writes) {
      const previous = await dataPlaneHashes(adminUrl);
      const result = await writes();
      await pollUntil(
        'every data plane to run the Admin API writes',
        async () => {
          const now = await dataPlaneHashes(adminUrl);
          // no data plane listed (a traditional node): the Admin API's answer is the proxy's state
          if (previous.size === 0 && now.size === 0) return true;
          return [...previous].every(([id, hash]) => now.has(id) && now.get(id) !== hash) && new Set(now.values()).size === 1;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      return result;
    },
    provision(username, limits) {
      return target.writing(async () => {
        const name = `${username}-${run}`;
        const consumer = await target.admin('/consumers', { method: 'POST', json: { username: name, tags: ['petstore-consumer', 'e2e'] } });
        if (consumer.status !== 201) throw new Error(`cannot create ${name}: ${JSON.stringify(consumer.body)}`);
        created.push(name);
        // in our ACL group, as the CLI puts every consumer (kong.yml's animal-store-access)
        const group = await target.admin(`/consumers/${name}/acls/animal-store`, { method: 'PUT', json: { tags: ['petstore-consumer'] } });
        if (group.status !== 200) throw new Error(`cannot put ${name} in the ACL group: ${JSON.stringify(group.body)}`);
        // as the CLI does (packages/provisioning/api-keys.ts): Kong holds only the key's digest, tagged hashed
        const key = generateApiKey();
        const credential = await target.admin(`/consumers/${name}/key-auth`, { method: 'POST', json: storedCredential(key, ['petstore-consumer', 'e2e']) });
        if (credential.status !== 201) throw new Error(`cannot create a key for ${name}: ${JSON.stringify(credential.body)}`);
        if (limits) {
          // counted where the gateway counts (Redis with compose) and tagged, as the CLI's plans are
          const config = { ...limits, limit_by: 'consumer', ...(await counterSettings(adminUrl)) };
          const plugin = await target.admin(`/consumers/${name}/plugins`, { method: 'POST', json: { name: 'rate-limiting', config, tags: ['petstore-consumer', 'e2e'] } });
          if (plugin.status !== 201) throw new Error(`cannot set limits for ${name}: ${JSON.stringify(plugin.body)}`);
        }
        return key;
      });
    },
    async dispose() {
      for (const name of created) await target.admin(`/consumers/${name}`, { method: 'DELETE' });
      await dispatcher?.close();
    },
  };
  return target;
}

/**
 * The target of one portable test file with one consumer's key: started in the file's `before`,
 * disposed in its `after.always`. Module state rather than `t.context`: test/deck/sync-then-e2e
 * and the other runs of the portable files import them all into one worker.
 */
export function targetWithKey(username: string, limits: { minute?: number; day?: number }): { target: Target; key: string } {
  const shared = {} as { target: Target; key: string };
  test.before(async () => {
    shared.target = await startTarget();
    shared.key = await shared.target.provision(username, limits);
  });
  test.after.always(async () => {
    await shared.target?.dispose();
  });
  return shared;
}
