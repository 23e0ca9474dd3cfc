import createClient, { type Client } from 'openapi-fetch';
import { fetchOnceMore, networkFailureReason } from '../../node-runtime/fetch-once-more.js';
import { ProvisioningError } from '../errors.ts';
import type { paths as AclPaths } from './generated/acl-api.d.ts';
import type { paths as ConsumerPaths } from './generated/consumers-api.d.ts';
import type { paths as KeyAuthPaths } from './generated/key-auth-api.d.ts';
import type { paths as KongPaths } from './generated/kong-admin-api.d.ts';

/**
 * Kong's Admin API: types generated from Kong's official OSS 3.9 OpenAPI, the key-auth plugin's
 * endpoints (key-auth.openapi.yaml), the ACL plugin's (acl.openapi.yaml) and the consumer endpoints as Kong serves them
 * (consumers.openapi.yaml). `npm run generate:kong-admin` writes generated/.
 */
type KongAdminPaths = Omit<KongPaths, keyof ConsumerPaths> & ConsumerPaths & KeyAuthPaths & AclPaths;
export type KongAdminClient = Client<KongAdminPaths>;

export interface AdminConnection {
  /** e.g. http://127.0.0.1:8001 */
  url: string;
  /** Extra headers, e.g. an admin token when the Admin API sits behind a proxy. */
  headers?: Record<string, string>;
  /** How long one call may take, answer and body, before it fails (default 30 s). */
  timeoutMs?: number;
}

const DEFAULT_ADMIN_TIMEOUT_MS = 30_000;

export function createKongAdminClient({ url, headers, timeoutMs = DEFAULT_ADMIN_TIMEOUT_MS }: AdminConnection): KongAdminClient {
  const base = url.replace(/\/+$/, '');
  return createClient<KongAdminPaths>({
    baseUrl: base,
    headers,
    // Network failures become one readable error instead of undici's "fetch failed".
    fetch: async (request: Request) => {
      // a read is safe to send again; a write is not (Kong may have applied it)
      const isRead = request.method === 'GET' || request.method === 'HEAD';
      let response: Response;
      // without it a silent Admin API holds the caller for undici's 300 s headers timeout
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const answered = await (isRead ? fetchOnceMore(() => fetch(request.clone(), { signal })) : fetch(request, { signal }));
        // the body read here, under the same timeout (Admin API answers are small)
        const body = await answered.arrayBuffer();
        const { status, statusText, headers: answerHeaders } = answered;
        response = new Response(body.byteLength === 0 ? null : body, { status, statusText, headers: answerHeaders });
      } catch (error) {
        if (signal.aborted) {
          const path = new URL(request.url).pathname;
          throw new ProvisioningError(
            'admin-api-unreachable',
            `the Kong Admin API at ${base} did not answer ${request.method} ${path} within ${timeoutMs / 1000} s${isRead ? '' : ' (it may have applied it)'}`,
          );
        }
        throw new ProvisioningError(
          'admin-api-unreachable',
          `cannot reach the Kong Admin API at ${base}: ${networkFailureReason(error, { sentTwice: isRead })}`,
        );
      }
      // A 404 reads "no such consumer": it must be the Admin API's, not the proxy's "no route" one.
      if (response.status === 404 && !(await isAdminApiError(response))) {
        const path = new URL(request.url).pathname;
        throw new ProvisioningError(
          'admin-api-unexpected',
          `${base} is not Kong's Admin API: it answered ${request.method} ${path} with a 404 Kong's Admin API never sends (the proxy? the Admin API listens on 8001 by default)`,
        );
      }
      return response;
    },
  });
}

/**
 * Whether an error answer is shaped as Kong's Admin API shapes them: a JSON object with a
 * `message` (kong/api/endpoints.lua not_found: `{"message":"Not found"}`), at most with a DB
 * error's numeric `code`, `name` and `fields` (kong/db/errors.lua). Kong's proxy adds a
 * `request_id` to its own (kong/pdk/response.lua, error); the edge plugin answers `code` as a
 * string and a `status`. Headers cannot tell: Kong sends X-Kong-Admin-Latency only while its
 * `headers` setting has latency_tokens.
 */
async function isAdminApiError(response: Response): Promise<boolean> {
  let body: unknown;
  try {
    body = await response.clone().json();
  } catch {
    return false;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { message, code, ...rest } = body as Record<string, unknown>;
  return (
    typeof message === 'string' &&
    (code === undefined || typeof code === 'number') &&
    Object.keys(rest).every((key) => key === 'name' || key === 'fields')
  );
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/**
 * Nothing, or an error that says what failed and why. With `bodyMayHoldSecret` the reason is
 * Kong's error name, never its message: a key-auth 409 reads `UNIQUE violation detected on
 * '{key="…"}'`, the key itself (kong/db/errors.lua, unique_violation).
 */
export function expectDone(result: Result<unknown>, what: string, bodyMayHoldSecret = false): void {
  if (result.response.ok) return;
  const body = result.error as { message?: string; name?: string } | undefined;
  const reason = bodyMayHoldSecret
    ? (body?.name ?? 'its message is not shown, it may hold the key')
    : (body?.message ?? `HTTP ${result.response.status}`);
  throw new ProvisioningError('admin-api-failed', `${what}: Kong answered ${result.response.status}: ${reason}`, result.response.status);
}

/**
 * The field of a 409 unique violation: Kong names the one another entity already holds in `fields`
 * (kong/db/errors.lua, unique_violation: `{"code":5,"fields":{"custom_id":"…"},…}`).
 */
export function uniqueViolation(result: Result<unknown>): string | undefined {
  if (result.response.status !== 409) return undefined;
  const body = result.error as { code?: unknown; fields?: unknown } | undefined;
  if (body?.code !== 5 || typeof body.fields !== 'object' || body.fields === null) return undefined;
  const [field] = Object.keys(body.fields);
  return field;
}

/** The body of a successful call that answers one (expectDone's errors otherwise). */
export function expectBody<T>(result: Result<T>, what: string, bodyMayHoldSecret = false): T {
  expectDone(result, what, bodyMayHoldSecret);
  if (result.data === undefined) {
    throw new ProvisioningError('admin-api-unexpected', `${what}: Kong answered ${result.response.status} without a body`);
  }
  return result.data;
}

/** One page of a listing as Kong answers it. */
export interface Page<T> {
  data: T[];
  offset?: string;
  next?: string | null;
}

/** Follows Kong's `next` links until the last page. */
export async function* pages<T>(fetchPage: (offset: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let offset: string | undefined;
  do {
    const page = await fetchPage(offset);
    yield* page.data;
    offset = page.next ? page.offset : undefined;
  } while (offset);
}
