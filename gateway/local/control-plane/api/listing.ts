import { InvalidOption, InvalidPaging } from '../schema/errors.ts';

/** Kong's list endpoints: `size` (1..1000, default 100), opaque `offset`, `tags` (a,b AND / a/b OR). */
export interface Page<T> {
  data: T[];
  offset?: string;
  next: string | null;
}

function invalid(name: 'invalid offset' | 'invalid size', message: string): never {
  throw new InvalidPaging(name, message);
}

// kong/api/endpoints.lua:44-51 (3.9.3): printable ASCII but ',' and '/', and bytes 0x80-0xF4, matched
// on the argument's bytes (here a latin1 string, one character a byte)
const TAG = String.raw`[\x20-\x2B\x2D\x2E\x30-\x7E\x80-\xF4]+`;
const TAGS_AND = new RegExp(`^(?:${TAG}(?:,|$))+$`);
const TAGS_OR = new RegExp(`^(?:${TAG}(?:/|$))+$`);

/** A `%XX` escape's byte, '+' a space: nginx's unescaping of a query argument (ngx.req.get_uri_args). */
const unescapeArgument = (text: string): Buffer =>
  Buffer.concat(
    text
      .replaceAll('+', ' ')
      .split(/(%[0-9A-Fa-f]{2})/)
      .map((part) => (/^%[0-9A-Fa-f]{2}$/.test(part) ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(part, 'latin1'))),
  );

/** The first `name` argument of a query string as bytes (a latin1 string), as Kong reads `args.uri[name][1]`. */
function firstArgument(querystring: string, name: string): string | undefined {
  for (const argument of querystring.split('&')) {
    const equals = argument.indexOf('=');
    const key = unescapeArgument(equals === -1 ? argument : argument.slice(0, equals)).toString('latin1');
    if (key === name) return equals === -1 ? '' : unescapeArgument(argument.slice(equals + 1)).toString('latin1');
  }
  return undefined;
}

/** ngx.escape_uri of bytes (a latin1 string): what encodeURIComponent keeps is kept, any other byte %XX. */
const escapeUri = (bytes: string): string =>
  Array.from(Buffer.from(bytes, 'latin1'), (byte) => {
    const char = String.fromCharCode(byte);
    return /[A-Za-z0-9\-_.!~*'()]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');

/**
 * The `tags` filter of a list (kong/api/endpoints.lua:158-184, kong/db/dao/init.lua:207-223,
 * 3.9.3): 'a,b' all of them, 'a/b' any of them, at most 5; the argument's bytes as sent, so a
 * byte no tag may hold (%FF) is invalid filter syntax. Tags compare as bytes.
 */
export function parseTags(tags: string | undefined): ((entityTags: string[] | null) => boolean) | undefined {
  if (tags === undefined) return undefined;
  if (tags === '') throw new InvalidOption('tags', 'cannot be null');
  const all = TAGS_AND.test(tags);
  if (!all && !TAGS_OR.test(tags)) throw new InvalidOption('tags', 'invalid filter syntax');
  const wanted = tags.split(all ? ',' : '/').filter((tag) => tag !== '');
  if (wanted.length > 5) throw new InvalidOption('tags', 'cannot query more than 5 tags');
  const bytesOf = (entityTags: string[] | null) => (entityTags ?? []).map((tag) => Buffer.from(tag).toString('latin1'));
  return all
    ? (entityTags) => wanted.every((t) => bytesOf(entityTags).includes(t))
    : (entityTags) => wanted.some((t) => bytesOf(entityTags).includes(t));
}

/** What a list reads of its request: the parsed query and, for `tags`, the query string's bytes. */
interface ListRequest {
  query: Record<string, unknown>;
  querystring: string;
}

/** Kong's paging arguments: `size` (1..1000, default 100) and the offset a previous page gave. */
export function pageArguments(query: Record<string, unknown>): { size: number; after: unknown[] | undefined } {
  let size = 100;
  if (query.size !== undefined) {
    size = Number(query.size);
    if (!Number.isFinite(size)) invalid('invalid size', 'size must be a number');
    if (!Number.isInteger(size) || size < 1 || size > 1000) invalid('invalid size', 'size must be an integer between 1 and 1000');
  }
  if (query.offset === undefined) return { size, after: undefined };
  // kong/db/strategies/postgres/init.lua:484-493 (3.9.3): base64 first, then JSON
  const offset = String(query.offset);
  const token = decodeBase64AsNginx(offset);
  if (token === undefined) invalid('invalid offset', `'${offset}' is not a valid offset: bad base64 encoding`);
  let decoded: unknown;
  try {
    decoded = JSON.parse(token.toString('utf8'));
  } catch {
    invalid('invalid offset', `'${offset}' is not a valid offset: bad json encoding`);
  }
  // JSON that is not our page key: Kong indexes it as the key's array (a number fails with a 500 there)
  if (!Array.isArray(decoded) || typeof decoded[0] !== 'string') invalid('invalid offset', `'${offset}' is not a valid offset: bad json encoding`);
  return { size, after: decoded };
}

/**
 * ngx.decode_base64's reading (nginx's ngx_decode_base64): the standard alphabet up to the first
 * '=', whatever follows it ignored, and not one more than a multiple of 4 long; else undefined.
 */
function decodeBase64AsNginx(text: string): Buffer | undefined {
  const padding = text.indexOf('=');
  const digits = padding === -1 ? text : text.slice(0, padding);
  if (!/^[A-Za-z0-9+/]*$/.test(digits) || digits.length % 4 === 1) return undefined;
  return Buffer.from(digits, 'base64');
}

/** The opaque offset of the page after `values` (Kong: base64 of a JSON array). */
export const encodeOffset = (values: unknown[]): string => Buffer.from(JSON.stringify(values)).toString('base64');

/**
 * Where a page's `next` link goes: a top-level list's path carries the tags and size it was given
 * (kong/api/endpoints.lua:317-339), a nested one's only the offset, under the parent's key as the
 * URL wrote it (:366-374). A nested list (`page_for_<foreign>`) is not filtered by its tags either,
 * though their syntax is checked (kong/db/strategies/postgres/init.lua:466-474;
 * 14-tags_spec.lua:121-130).
 */
interface NextLink {
  path: string;
  filters: boolean;
}

/** Entities ordered by id (as Kong's PostgreSQL strategy pages them), filtered, then sliced. */
export function paginate<T extends { id: string; tags: string[] | null }>(
  items: T[],
  { query, querystring }: ListRequest,
  next: NextLink,
  render: (item: T) => unknown = (item) => item,
): Page<unknown> {
  const { size, after: afterKey } = pageArguments(query);
  const after = afterKey && String(afterKey[0]);
  const tags = firstArgument(querystring, 'tags');
  const parsed = parseTags(tags);
  const matches = next.filters ? parsed : undefined;
  const sorted = items.filter((item) => !matches || matches(item.tags)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const start = after === undefined ? 0 : sorted.findIndex((item) => item.id > after);
  const slice = start === -1 ? [] : sorted.slice(start, start + size);
  const last = slice[slice.length - 1];
  const page: Page<unknown> = { data: slice.map(render), next: null };
  if (last && start + size < sorted.length) {
    const offset = encodeOffset([last.id]);
    page.offset = offset;
    // the first tags argument escaped again, size as given
    const tagsArgument = next.filters && tags !== undefined ? `&tags=${escapeUri(tags)}` : '';
    const sizeArgument = next.filters && query.size !== undefined ? `&size=${String(query.size)}` : '';
    page.next = `${next.path}?offset=${encodeURIComponent(offset)}${tagsArgument}${sizeArgument}`;
  }
  return page;
}
