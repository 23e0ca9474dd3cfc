import { UsageError } from './errors.ts';

/**
 * `value` as an http(s) URL without query or fragment; anything else is a UsageError naming `source`.
 * The error quotes the value only when it cannot hold a password (no `@`).
 */
export function httpUrl(value: string, source: string, example: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    const got = value.includes('@') ? 'got a value with "@" (not shown: it may hold a password)' : `got ${JSON.stringify(value)}`;
    throw new UsageError(`${source} must be an http(s) URL such as ${example}, ${got}`);
  }
  return url;
}
