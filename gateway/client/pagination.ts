import LinkHeader from 'http-link-header';
import type { Client } from 'openapi-fetch';
import type { paths } from './generated/animal-store-api.d.ts';

/** The list operations: a JSON array per page, the next page in `Link: <…>; rel="next"`. */
export type ListPath = '/pets' | '/store/orders';
export type ListQuery<P extends ListPath> = NonNullable<paths[P]['get']['parameters']['query']>;
export type ListItem<P extends ListPath> = paths[P]['get']['responses'][200]['content']['application/json'][number];

/** The next page's URL from a Link header (RFC 8288), resolved against the page's own URL. */
function nextPageUrl(response: Response): URL | undefined {
  const header = response.headers.get('link');
  const next = header ? LinkHeader.parse(header).rel('next')[0] : undefined;
  return next ? new URL(next.uri, response.url) : undefined;
}

/**
 * Pages of `path`, first with `query`, then each the target of the previous page's next link,
 * until a page has none. The link's query (cursor, limit, filters) is sent as it came: the cursor
 * is opaque.
 */
export async function* pages<P extends ListPath>(
  client: Client<paths>,
  baseUrl: string,
  path: P,
  query: ListQuery<P> = {},
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<Array<ListItem<P>>> {
  const expectedPath = new URL(`${baseUrl.replace(/\/+$/, '')}${path}`).pathname;
  let params: Record<string, string | number> = { ...query };
  for (;;) {
    const get = client.GET as (
      path: ListPath,
      init: { params: { query: typeof params }; signal?: AbortSignal },
    ) => Promise<{ data?: unknown; response: Response }>;
    const { data, response } = await get(path, { params: { query: params }, signal: options.signal });
    yield data as Array<ListItem<P>>;
    const next = nextPageUrl(response);
    if (!next) return;
    if (next.pathname !== expectedPath) throw new Error(`the next-page link points at ${next.pathname}, not at ${expectedPath}`);
    params = Object.fromEntries(next.searchParams);
  }
}

/** Every item of every page, in order. */
export async function* items<P extends ListPath>(
  client: Client<paths>,
  baseUrl: string,
  path: P,
  query?: ListQuery<P>,
  options?: { signal?: AbortSignal },
): AsyncGenerator<ListItem<P>> {
  for await (const page of pages(client, baseUrl, path, query, options)) yield* page;
}
