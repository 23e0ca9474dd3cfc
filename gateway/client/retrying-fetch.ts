import { backoffDelay, retryAfterDelay, type RetryPolicy } from './backoff.ts';
import { NetworkError, readRetryAfter } from './errors.ts';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface Transport {
  fetch: (request: Request) => Promise<Response>;
  now: () => number;
  sleep: Sleep;
  random: () => number;
}

/** Methods that mean the same when sent twice (RFC 9110 §9.2.2); a POST needs an Idempotency-Key. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const RETRIED_STATUSES = new Set([502, 503, 504]);

export const abortableSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

// A certificate the client does not trust stays untrusted: no retry can help (Node's codes).
const CERTIFICATE_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function untrustedCertificate(error: Error): boolean {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === 'string' && CERTIFICATE_ERRORS.has(code);
}

function safeToRepeat(request: Request): boolean {
  return IDEMPOTENT_METHODS.has(request.method) || request.headers.has('idempotency-key');
}

async function errorCode(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { code?: unknown };
    return typeof body?.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How long to wait before the next attempt, or undefined for "this is the answer". 429s and 409
 * `idempotency_key_in_progress` carry Retry-After; 502/503/504 and lost connections back off.
 */
async function retryDelay(
  request: Request,
  outcome: Response | Error,
  retry: number,
  policy: RetryPolicy,
  random: () => number,
): Promise<number | undefined> {
  if (outcome instanceof Error) {
    return safeToRepeat(request) && !untrustedCertificate(outcome) ? backoffDelay(retry, policy, random) : undefined;
  }
  if (RETRIED_STATUSES.has(outcome.status)) return safeToRepeat(request) ? backoffDelay(retry, policy, random) : undefined;
  const retryAfter = readRetryAfter(outcome.headers);
  if (retryAfter === undefined) return undefined;
  const code = outcome.status === 429 || outcome.status === 409 ? await errorCode(outcome) : undefined;
  // The gateway refuses a rate-limited request before the service sees it: any method may repeat it.
  if (code === 'rate_limit_exceeded') return retryAfterDelay(retryAfter, policy, random);
  if (code === 'idempotency_key_in_progress') return retryAfterDelay(retryAfter, policy, random);
  return undefined; // api_key_banned and everything else: the caller decides
}

/**
 * A fetch that retries as the API's spec asks clients to. Every attempt sends a fresh copy of the
 * same request, so a POST repeats with the Idempotency-Key its logical call was given.
 */
export function retryingFetch(policy: RetryPolicy, transport: Transport): (request: Request) => Promise<Response> {
  return async (request) => {
    const started = transport.now();
    for (let attempt = 1; ; attempt++) {
      let outcome: Response | Error;
      try {
        outcome = await transport.fetch(request.clone());
      } catch (error) {
        if (request.signal.aborted) throw request.signal.reason;
        outcome = error as Error;
      }
      const delay = attempt < policy.maxAttempts ? await retryDelay(request, outcome, attempt, policy, transport.random) : undefined;
      const withinBudget = delay !== undefined && transport.now() + delay - started <= policy.timeBudgetMs;
      if (!withinBudget) {
        if (outcome instanceof Response) return outcome;
        throw new NetworkError(`${request.method} ${request.url} got no response after ${attempt} attempt(s): ${describe(outcome)}`, attempt, { cause: outcome });
      }
      if (outcome instanceof Response) await outcome.body?.cancel();
      await transport.sleep(delay, request.signal);
    }
  };
}

function describe(error: Error): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? error.message;
}
