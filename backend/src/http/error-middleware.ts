import type { Middleware } from 'koa';
import { ApiError, ErrorCode } from './errors.ts';
import { calledPath } from './public-path.ts';
import { isStoreUnavailable } from './store-unavailable.ts';

export type ErrorLogger = (error: unknown, context: { method: string; path: string }) => void;

const defaultLogger: ErrorLogger = (error, { method, path }) => {
  // Only the route and the error: request headers and bodies may hold secrets.
  console.error(`[backend] unhandled error on ${method} ${path}:`, error);
};

/** What a client is told to wait while the database is unavailable. */
const STORE_RETRY_AFTER_SECONDS = 5;
/** An outage fails every request: one line for it at most this often, not one per request. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;
let lastOutageLog = -Infinity;

function logOutage(error: unknown): void {
  const now = performance.now();
  if (now - lastOutageLog < OUTAGE_LOG_INTERVAL_MS) return;
  lastOutageLog = now;
  const { code, message } = error as { code?: unknown; message?: unknown };
  console.error(`[backend] the database is unavailable (${typeof code === 'string' ? code : String(message)}): answering 503`);
}

/** Paths longer than any the API serves are described by their length, not echoed (a request line may hold 8 KiB). */
const MAX_PATH_ECHO = 100;
export const describePath = (path: string) => (path.length <= MAX_PATH_ECHO ? path : `a path of ${path.length} characters`);

/**
 * Turns every failure into the Error shape: thrown ApiErrors, unmatched routes
 * (404), methods a path does not serve (405, with the router's Allow header; both messages name
 * the path the client called, see calledPath), the database
 * unavailable (503 with Retry-After) and anything unexpected (500, logged, never echoed).
 */
export function errorMiddleware(log: ErrorLogger = defaultLogger): Middleware {
  return async (ctx, next) => {
    let apiError: ApiError | undefined;
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) {
          apiError = new ApiError(404, ErrorCode.notFound, `No resource at ${ctx.method} ${describePath(calledPath(ctx))}.`);
        } else if (ctx.status === 405) {
          apiError = new ApiError(405, ErrorCode.methodNotAllowed, `Method ${ctx.method} is not allowed on ${describePath(calledPath(ctx))}.`);
        }
      }
    } catch (error) {
      if (error instanceof ApiError) {
        apiError = error;
      } else if (isStoreUnavailable(error)) {
        logOutage(error);
        ctx.set('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
        apiError = new ApiError(503, ErrorCode.serviceUnavailable, 'The service is temporarily unavailable; retry after Retry-After seconds.');
      } else {
        log(error, { method: ctx.method, path: ctx.path });
        apiError = new ApiError(500, ErrorCode.internalError, 'An unexpected error occurred.');
      }
    }
    if (apiError) {
      ctx.status = apiError.status;
      ctx.body = apiError.toBody();
    }
  };
}
