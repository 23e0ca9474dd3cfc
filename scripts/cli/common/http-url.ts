import { UsageError } from './errors.ts';

/** `value` as an http(s) URL without query or fragment; anything else is a UsageError naming `source`. */
export function httpUrl(value: string, source: string, example: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new UsageError(`${source} must be an http(s) URL such as ${example}, got ${JSON.stringify(value)}`);
  }
  return url;
}
