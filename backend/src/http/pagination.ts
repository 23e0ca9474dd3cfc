import type { Context } from 'koa';
import { object, optional, string, type Struct } from 'superstruct';
import { ApiError, ErrorCode } from './errors.ts';
import { PAGE_LIMIT, PageLimitParam } from './params.ts';
import { publicRequestPath } from './public-path.ts';
import { parseWith } from './validation.ts';

/**
 * Keyset pagination on ascending id. The cursor is opaque to clients: base64url of "id:<last id>",
 * so its format can change without breaking anyone who follows Link headers.
 */
const CURSOR_PATTERN = /^id:([1-9][0-9]{0,15})$/;

export function encodeCursor(lastId: number): string {
  return Buffer.from(`id:${lastId}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = /^[A-Za-z0-9_-]+$/.test(cursor)
    ? CURSOR_PATTERN.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
    : null;
  const id = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(id)) {
    throw new ApiError(400, ErrorCode.invalidCursor, 'The cursor is not valid; follow the Link header of a previous page.');
  }
  return id;
}

/** One page: `limit` items, plus the id to continue after when there is more. */
interface Page<T> {
  items: readonly T[];
  nextAfterId?: number;
}

/** Query `limit + 1` rows, then cut: the extra row only tells whether a next page exists. */
function toPage<T extends { id: number }>(rows: readonly T[], limit: number): Page<T> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, nextAfterId: items[items.length - 1]!.id };
}

/**
 * The `Link: <...>; rel="next"` value when another page exists (the body stays a plain array),
 * pointing at the public path of the current request.
 */
function nextLink(ctx: Context, page: Page<unknown>, query: Record<string, string | number | undefined>): string | undefined {
  if (page.nextAfterId === undefined) return undefined;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  params.set('cursor', encodeCursor(page.nextAfterId));
  return `<${publicRequestPath(ctx)}?${params}>; rel="next"`;
}

/** A list response ready to send: the JSON array and its Link header. */
export interface RenderedPage {
  json: string;
  link?: string;
}

export function sendPage(ctx: Context, page: RenderedPage): void {
  ctx.type = 'application/json';
  ctx.body = page.json;
  if (page.link) ctx.set('Link', page.link);
}

/** What a list operation asks its store for: rows after `afterId`, optionally of one status. */
export interface ListQuery<S extends string> {
  status?: S;
  afterId?: number;
  /** One more than the page size: the extra row only tells whether a next page exists. */
  take: number;
}

/**
 * The list operations' one shape (`limit`, `status`, `cursor` in; a JSON array and Link out):
 * returns the function that validates a request's query, loads its page and renders it.
 */
export function pageRenderer<S extends string>(
  statusStruct: Struct<S, unknown>,
  load: (query: ListQuery<S>) => Promise<readonly { id: number }[]>,
): (ctx: Context) => Promise<RenderedPage> {
  const Query = object({ limit: optional(PageLimitParam), status: optional(statusStruct), cursor: optional(string()) });
  return async (ctx) => {
    // superstruct cannot infer object types over a generic member; this is what Query validates.
    const query = parseWith(Query, { ...ctx.query }, 'query') as { limit?: number; status?: S; cursor?: string };
    const limit = query.limit ?? PAGE_LIMIT.default;
    const afterId = decodeCursor(query.cursor);
    const page = toPage(await load({ status: query.status, afterId, take: limit + 1 }), limit);
    return { json: JSON.stringify(page.items), link: nextLink(ctx, page, { limit, status: query.status }) };
  };
}
