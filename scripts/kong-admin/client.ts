import createClient, { type Client } from 'openapi-fetch';
import type { paths as AclPaths } from './acl-api.d.ts';
import type { paths as KeyAuthPaths } from './key-auth-api.d.ts';
import type { components, paths as KongPaths } from './kong-admin-api.d.ts';

/** Kong's Admin API (types generated from Kong's official OSS 3.9 OpenAPI + the key-auth and ACL supplements). */
export type KongAdminPaths = KongPaths & KeyAuthPaths & AclPaths;
export type KongAdminClient = Client<KongAdminPaths>;
export type Consumer = components['schemas']['Consumer'];
export type Plugin = components['schemas']['Plugin'];
export type KeyAuthCredential = KeyAuthPaths['/consumers/{consumer_username_or_id}/key-auth']['post']['responses']['201']['content']['application/json'];

/** A failed Admin API call, with Kong's own message when it sent one. */
export class AdminApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface AdminConnection {
  /** e.g. http://127.0.0.1:8001 */
  url: string;
  /** Extra headers, e.g. an admin token when the Admin API sits behind a proxy. */
  headers?: Record<string, string>;
}

export function createKongAdminClient({ url, headers }: AdminConnection): KongAdminClient {
  const base = url.replace(/\/+$/, '');
  return createClient<KongAdminPaths>({
    baseUrl: base,
    headers,
    // Network failures become one readable error instead of undici's "fetch failed".
    fetch: async (request: Request) => {
      try {
        return await fetch(request);
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        throw new AdminApiError(`cannot reach the Kong Admin API at ${base}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
      }
    },
  });
}

/**
 * The data of a successful call, or an AdminApiError that says what failed and why. With
 * `bodyMayHoldSecret` the reason is Kong's error name, never its message: a key-auth 409 reads
 * `UNIQUE violation detected on '{key="…"}'`, the key itself (kong/db/errors.lua, unique_violation).
 */
export function expectOk<T>(result: { data?: T; error?: unknown; response: Response }, what: string, bodyMayHoldSecret = false): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  if (result.response.ok) return undefined as T;
  const body = result.error as { message?: string; name?: string } | undefined;
  const reason = bodyMayHoldSecret
    ? (body?.name ?? 'its message is not shown, it may hold the key')
    : (body?.message ?? `HTTP ${result.response.status}`);
  throw new AdminApiError(`${what}: Kong answered ${result.response.status}: ${reason}`, result.response.status);
}

/** Follows Kong's `next` links until the last page. */
export async function* pages<T>(
  fetchPage: (offset: string | undefined) => Promise<{ data?: T[]; offset?: string; next?: string | null }>,
): AsyncGenerator<T> {
  let offset: string | undefined;
  do {
    const page = await fetchPage(offset);
    yield* page.data ?? [];
    offset = page.next ? page.offset : undefined;
  } while (offset);
}
