import type { components } from './generated/animal-store-api.d.ts';

export type ErrorCode = components['schemas']['ErrorCode'];

/** The X-RateLimit-* headers of a response: the most constraining window of the caller's plan. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** When that window resets. */
  reset: Date;
}

function readRateLimit(headers: Headers): RateLimitState | undefined {
  const limit = Number(headers.get('x-ratelimit-limit') ?? NaN);
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? NaN);
  const reset = Number(headers.get('x-ratelimit-reset') ?? NaN);
  if (![limit, remaining, reset].every(Number.isFinite)) return undefined;
  return { limit, remaining, reset: new Date(reset * 1000) };
}

/** Retry-After in seconds (the API always sends delta-seconds), or undefined. */
export function readRetryAfter(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
}

/**
 * An error response of the API: `{code, message, status}` as the contract's Error schema says,
 * with the rate-limit headers that came with it. `code` is a string: the API may add codes.
 */
export class ApiError extends Error {
  override readonly name: string = 'ApiError';

  constructor(
    readonly status: number,
    readonly code: ErrorCode | (string & {}),
    message: string,
    readonly rateLimit: RateLimitState | undefined,
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(message);
  }

  /** Reads the Error body of `response` (which it consumes); any other body still gives an ApiError. */
  static async fromResponse(response: Response, now: () => number = Date.now): Promise<ApiError> {
    const text = await response.text().catch(() => '');
    let body: { code?: unknown; message?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not the Error shape (a proxy in between, say): keep the status and the text
    }
    const code = typeof body?.code === 'string' ? body.code : `http_${response.status}`;
    const message = typeof body?.message === 'string' ? body.message : text.slice(0, 200) || response.statusText;
    const rateLimit = readRateLimit(response.headers);
    const retryAfter = readRetryAfter(response.headers);
    if (code === 'api_key_banned') {
      return new ApiKeyBannedError(response.status, message, rateLimit, retryAfter, new Date(now() + (retryAfter ?? 0) * 1000));
    }
    return new ApiError(response.status, code, message, rateLimit, retryAfter);
  }
}

/** 429 `api_key_banned`: the key sent too many requests after being limited. Never retried. */
export class ApiKeyBannedError extends ApiError {
  override readonly name = 'ApiKeyBannedError';

  constructor(
    status: number,
    message: string,
    rateLimit: RateLimitState | undefined,
    retryAfterSeconds: number | undefined,
    /** When the ban ends (the time of the response plus its Retry-After). */
    readonly bannedUntil: Date,
  ) {
    super(status, 'api_key_banned', message, rateLimit, retryAfterSeconds);
  }
}

/** No response at all (connection refused, reset, dropped) after every attempt the policy allowed. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';

  constructor(
    message: string,
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}
