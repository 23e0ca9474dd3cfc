import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/animal-store-api.d.ts';
import { DEFAULT_RETRY, type RetryOptions } from './backoff.ts';
import { bearerAuth, errorsAsExceptions, idempotencyKeys } from './middleware.ts';
import { items, pages, type ListItem, type ListPath, type ListQuery } from './pagination.ts';
import { abortableSleep, retryingFetch, type Sleep } from './retrying-fetch.ts';
import { fetchTrusting } from './tls.ts';

export type Pet = components['schemas']['Pet'];
export type Order = components['schemas']['Order'];
export type { paths, components } from './generated/animal-store-api.d.ts';
export { ApiError, ApiKeyBannedError, NetworkError, type RateLimitState } from './errors.ts';
export type { RetryOptions } from './backoff.ts';

export interface AnimalStoreClientOptions {
  /** The public base URL, ending with /v1 (e.g. https://api.example.com/v1). */
  baseUrl: string;
  apiKey: string;
  retry?: RetryOptions;
  /**
   * PEM certificate(s) to trust instead of the system's CAs, for a gateway with a self-signed
   * certificate (`npm start`'s data/gateway/node/ssl/kong-default-ca.crt). Ignored with `fetch`.
   */
  ca?: string | Buffer;
  /** Injectable for tests; default: global fetch, Date.now, setTimeout, Math.random, crypto.randomUUID. */
  fetch?: (request: Request) => Promise<Response>;
  now?: () => number;
  sleep?: Sleep;
  random?: () => number;
  newIdempotencyKey?: () => string;
}

export interface AnimalStoreClient extends Client<paths> {
  /** Pages of a list operation, following `Link: rel="next"`. */
  pages<P extends ListPath>(path: P, query?: ListQuery<P>, options?: { signal?: AbortSignal }): AsyncGenerator<Array<ListItem<P>>>;
  /** Every item of a list operation, across pages. */
  items<P extends ListPath>(path: P, query?: ListQuery<P>, options?: { signal?: AbortSignal }): AsyncGenerator<ListItem<P>>;
}

/**
 * A typed client of the Animal Store API (types generated from gateway/openapi.yaml). A call
 * resolves with `{ data, response }` for a 2xx and throws ApiError otherwise, after the retries
 * the API's spec asks for; pass `signal` to abort a call, its waits included.
 */
export function createAnimalStoreClient(options: AnimalStoreClientOptions): AnimalStoreClient {
  const now = options.now ?? Date.now;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const client = createClient<paths>({
    baseUrl,
    fetch: retryingFetch(
      { ...DEFAULT_RETRY, ...options.retry },
      {
        fetch: options.fetch ?? (options.ca ? fetchTrusting(options.ca) : (request) => fetch(request)),
        now,
        sleep: options.sleep ?? abortableSleep,
        random: options.random ?? Math.random,
      },
    ),
  });
  client.use(bearerAuth(options.apiKey), idempotencyKeys(options.newIdempotencyKey), errorsAsExceptions(now));
  return Object.assign(client, {
    pages: <P extends ListPath>(path: P, query?: ListQuery<P>, init?: { signal?: AbortSignal }) =>
      pages(client, baseUrl, path, query, init),
    items: <P extends ListPath>(path: P, query?: ListQuery<P>, init?: { signal?: AbortSignal }) =>
      items(client, baseUrl, path, query, init),
  });
}
