/** When to retry and how long to wait: the client's retry policy, as options. */
export interface RetryOptions {
  /** Attempts in all, the first included (default 5). */
  maxAttempts?: number;
  /** Exponential backoff: the first retry waits up to this (default 200 ms)… */
  baseDelayMs?: number;
  /** …doubling per attempt up to this (default 10 s); the wait is uniform in [0, that] ("full jitter"). */
  maxDelayMs?: number;
  /** No retry starts whose wait would end later than this after the call began (default 60 s). */
  timeBudgetMs?: number;
  /** A Retry-After longer than this is not waited out: the 429 is returned as an error (default 60 s). */
  maxRetryAfterMs?: number;
  /** Up to this much is added at random to a Retry-After wait, so that clients do not return in step (default 1 s). */
  retryAfterJitterMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  timeBudgetMs: 60_000,
  maxRetryAfterMs: 60_000,
  retryAfterJitterMs: 1_000,
};

/** "Full jitter" (AWS Architecture Blog, 2015): uniform in [0, min(cap, base · 2^(retry−1))]. */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/** Retry-After is a lower bound: never earlier, up to retryAfterJitterMs later; undefined when over the cap. */
export function retryAfterDelay(seconds: number, policy: RetryPolicy, random: () => number): number | undefined {
  const wait = seconds * 1000;
  if (wait > policy.maxRetryAfterMs) return undefined;
  return wait + Math.floor(random() * policy.retryAfterJitterMs);
}
