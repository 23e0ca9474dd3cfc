import type { Middleware } from 'koa';
import { ApiError, ErrorCode } from './errors.ts';

export type ErrorLogger = (error: unknown, context: { method: string; path: string }) => void;

const defaultLogger: ErrorLogger = (error, { method, path }) => {
  // Only the route and the error: request headers and bodies may hold secrets.
  console.error(`[backend] unhandled error on ${method} ${path}:`, error);
};

/** Paths longer than any the API serves are described by their length, not echoed (a request line may hold 8 KiB). */
const MAX_PATH_ECHO = 100;
export const describePath = (path: string) => (path.length <= MAX_PATH_ECHO ? path : `a path of ${path.length} characters`);

/**
 * Turns every failure into the Error shape: thrown ApiErrors, unmatched routes
 * (404), methods a path does not serve (405, with the router's Allow header) and anything
 * unexpected (500, logged, never echoed).
 */
export function errorMiddleware(log: ErrorLogger = defaultLogger): Middleware {
  return async (ctx, next) => {
    let apiError: ApiError | undefined;
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) {
          apiError = new ApiError(404, ErrorCode.notFound, `No resource at ${ctx.method} ${describePath(ctx.path)}.`);
        } else if (ctx.status === 405) {
          apiError = new ApiError(405, ErrorCode.methodNotAllowed, `Method ${ctx.method} is not allowed on ${describePath(ctx.path)}.`);
        }
      }
    } catch (error) {
      if (error instanceof ApiError) {
        apiError = error;
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
