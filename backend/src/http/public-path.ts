import { posix } from 'node:path';

/** What the public path is rebuilt from: a request's headers by name and its path here (a Koa Context is one). */
export interface ForwardedRequest {
  get(name: string): string;
  readonly path: string;
}

/** Forwarded paths are taken only when plain: no scheme, host, query or escapes to smuggle in. */
const PLAIN_PATH = /^\/[A-Za-z0-9._~/-]*$/;

/**
 * The public path prefix the gateway stripped (Kong sends it as X-Forwarded-Prefix), so that links
 * point at the public address. Only a plain path is accepted.
 */
function publicPrefix(request: Pick<ForwardedRequest, 'get'>): string {
  const prefix = request.get('X-Forwarded-Prefix');
  if (!PLAIN_PATH.test(prefix)) return '';
  return prefix.replace(/\/+$/, '');
}

export function publicPath(request: Pick<ForwardedRequest, 'get'>, path: string): string {
  return `${publicPrefix(request)}${path}`;
}

/**
 * The path the client asked for, as it spelt it: Kong forwards it as X-Forwarded-Path; without it,
 * or when it is not a plain path, the stripped prefix and our path. A request that did not come
 * through the gateway has neither: our path.
 */
export function calledPath(request: ForwardedRequest): string {
  const forwarded = request.get('X-Forwarded-Path');
  return PLAIN_PATH.test(forwarded) ? forwarded : publicPath(request, request.path);
}

/**
 * The public path of this request, for a link to the same resource: calledPath with dot segments
 * resolved, `//` merged and no trailing slash. The prefix alone is not enough: a regex route
 * strips its whole match (GET /v1/pets/ arrives as /pets/ with the prefix /v1/pets/).
 */
export function publicRequestPath(request: ForwardedRequest): string {
  const normalized = posix.normalize(calledPath(request));
  return normalized.length > 1 ? normalized.replace(/\/$/, '') : normalized;
}
