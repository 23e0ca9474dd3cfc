import { randomBytes } from 'node:crypto';
import { generateApiKey, storedCredential } from '../../packages/provisioning/index.ts';
import { request, type JsonResponse } from './backend.ts';
import { startStack } from './stack.ts';

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
  dispose(): Promise<void>;
}

/**
 * GATEWAY_URL (+ KONG_ADMIN_URL) set: a running deployment, e.g. `docker compose up -d` with real
 * Kong. Unset: the local stack (backend + local gateway running gateway/kong.yml), started here.
 */
export async function startTarget(): Promise<Target> {
  const gatewayUrl = process.env.GATEWAY_URL;
  if (!gatewayUrl) {
    const stack = await startStack();
    return { ...stack, description: 'local stack', adminUrl: stack.gateway.adminUrl };
  }
  const adminUrl = process.env.KONG_ADMIN_URL ?? 'http://127.0.0.1:8001';
  const run = randomBytes(4).toString('hex');
  const created: string[] = [];
  const target: Target = {
    description: `${gatewayUrl} (admin ${adminUrl})`,
    adminUrl,
    call(path, init = {}) {
      const { key, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
      return request(`${gatewayUrl.replace(/\/+$/, '')}${path}`, { ...rest, headers });
    },
    admin(path, init = {}) {
      return request(`${adminUrl.replace(/\/+$/, '')}${path}`, init);
    },
    async provision(username, limits) {
      const name = `${username}-${run}`;
      const consumer = await target.admin('/consumers', { method: 'POST', json: { username: name, tags: ['petstore-consumer', 'e2e'] } });
      if (consumer.status !== 201) throw new Error(`cannot create ${name}: ${JSON.stringify(consumer.body)}`);
      created.push(name);
      // as the CLI does (packages/provisioning/api-keys.ts): Kong holds only the key's digest, tagged hashed
      const key = generateApiKey();
      const credential = await target.admin(`/consumers/${name}/key-auth`, { method: 'POST', json: storedCredential(key, ['petstore-consumer', 'e2e']) });
      if (credential.status !== 201) throw new Error(`cannot create a key for ${name}: ${JSON.stringify(credential.body)}`);
      if (limits) await target.admin(`/consumers/${name}/plugins`, { method: 'POST', json: { name: 'rate-limiting', config: { ...limits, limit_by: 'consumer' } } });
      return key;
    },
    async dispose() {
      for (const name of created) await target.admin(`/consumers/${name}`, { method: 'DELETE' });
    },
  };
  return target;
}
