import type { Middleware } from 'openapi-fetch';
import { ApiError } from './errors.ts';

/** `Authorization: Bearer <key>` on every request (the only form the API accepts). */
export function bearerAuth(apiKey: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${apiKey}`);
      return request;
    },
  };
}

/**
 * One Idempotency-Key per logical POST (onRequest runs once per call; the retrying fetch resends
 * this same request), so a retried POST is replayed by the API instead of running twice. A key
 * the caller set is kept.
 */
export function idempotencyKeys(newKey: () => string = () => crypto.randomUUID()): Middleware {
  return {
    onRequest({ request }) {
      if (request.method === 'POST' && !request.headers.has('Idempotency-Key')) request.headers.set('Idempotency-Key', newKey());
      return request;
    },
  };
}

/** Any error response, once the retries are over, is thrown as an ApiError (ApiKeyBannedError for a ban). */
export function errorsAsExceptions(now: () => number): Middleware {
  return {
    async onResponse({ response }) {
      if (!response.ok) throw await ApiError.fromResponse(response, now);
      return undefined;
    },
  };
}
