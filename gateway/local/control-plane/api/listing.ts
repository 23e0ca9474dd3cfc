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

// kong/api/endpoints.lua:44-51 (3.9.3): printable ASCII but ',' and '/', and bytes 0x80-0xF4 (as UTF-8 text)
const TAG = String.raw`[\x20-\x2B\x2D\x2E\x30-\x7E\u0080-\u{10FFFF}]+`;
const TAGS_AND = new RegExp(`^(?:${TAG}(?:,|$))+$`, 'u');
const TAGS_OR = new RegExp(`^(?:${TAG}(?:/|$))+$`, 'u');

/**
 * The `tags` filter of a list (kong/api/endpoints.lua extract_options, kong/db/dao/init.lua
 * validate_options_value, 3.9.3): 'a,b' all of them, 'a/b' any of them, at most 5.
 */
export function parseTags(tags: unknown): ((entityTags: string[] | null) => boolean) | undefined {
  if (tags === undefined) return undefined;
  const first: unknown = Array.isArray(tags) ? tags[0] : tags;
  const text = typeof first === 'string' ? first : '';
  if (text === '') throw new InvalidOption('tags', 'cannot be null');
  const all = TAGS_AND.test(text);
  if (!all && !TAGS_OR.test(text)) throw new InvalidOption('tags', 'invalid filter syntax');
  const wanted = text.split(all ? ',' : '/').filter((tag) => tag !== '');
  if (wanted.length > 5) throw new InvalidOption('tags', 'cannot query more than 5 tags');
  return all
    ? (entityTags) => wanted.every((t) => entityTags?.includes(t))
    : (entityTags) => wanted.some((t) => entityTags?.includes(t));
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

/** Entities ordered by id (as Kong's PostgreSQL strategy pages them), filtered, then sliced. */
export function paginate<T extends { id: string; tags: string[] | null }>(
  items: T[],
  query: Record<string, unknown>,
  basePath: string,
  render: (item: T) => unknown = (item) => item,
): Page<unknown> {
  const { size, after: afterKey } = pageArguments(query);
  const after = afterKey && String(afterKey[0]);
  const matches = parseTags(query.tags);
  const sorted = items.filter((item) => !matches || matches(item.tags)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const start = after === undefined ? 0 : sorted.findIndex((item) => item.id > after);
  const slice = start === -1 ? [] : sorted.slice(start, start + size);
  const last = slice[slice.length - 1];
  const page: Page<unknown> = { data: slice.map(render), next: null };
  if (last && start + size < sorted.length) {
    const offset = encodeOffset([last.id]);
    page.offset = offset;
    const extras = `${query.tags !== undefined ? `&tags=${encodeURIComponent(String(query.tags))}` : ''}${query.size !== undefined ? `&size=${String(query.size)}` : ''}`;
    page.next = `${basePath}?offset=${encodeURIComponent(offset)}${extras}`;
  }
  return page;
}
