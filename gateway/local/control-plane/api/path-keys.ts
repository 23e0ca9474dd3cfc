import type Koa from 'koa';
import { definitionOf, type EntityName } from '../schema/entities/index.ts';
import { InvalidPrimaryKey, InvalidUnique, NotFound } from '../schema/errors.ts';

/**
 * ngx.unescape_uri (lua-nginx-module 0.10.26, ngx_http_lua_util.c ngx_http_lua_unescape_uri as a
 * URI component): `%XX` is its byte, `+` a space, a `%` without two hex digits stays.
 */
export function unescapeUri(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const out: number[] = [];
  const hex = (byte: number | undefined) => byte !== undefined && /^[0-9A-Fa-f]$/.test(String.fromCharCode(byte));
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === 0x25 && hex(bytes[i + 1]) && hex(bytes[i + 2])) {
      out.push(parseInt(String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!), 16));
      i += 2;
    } else {
      out.push(byte === 0x2b ? 0x20 : byte);
    }
  }
  return Buffer.from(out);
}

const within = (byte: number | undefined, low: number, high: number) => byte !== undefined && byte >= low && byte <= high;
const tail = (byte: number | undefined) => within(byte, 0x80, 0xbf);
const threeByteLead = (a: number, b: number | undefined) =>
  (a === 0xe0 && within(b, 0xa0, 0xbf)) ||
  (within(a, 0xe1, 0xec) && tail(b)) ||
  (a === 0xed && within(b, 0x80, 0x9f)) ||
  (within(a, 0xee, 0xef) && tail(b));
const fourByteLead = (a: number, b: number | undefined) =>
  (a === 0xf0 && within(b, 0x90, 0xbf)) || (within(a, 0xf1, 0xf3) && tail(b)) || (a === 0xf4 && within(b, 0x80, 0x8f));

/**
 * kong/tools/string.lua:85-104 validate_utf8 (3.9.3): the 1-based position of the first byte that
 * starts no sequence it takes, or undefined. Its ranges as Kong writes them, a two-byte
 * sequence's second byte from 0x7B included.
 */
function utf8ErrorAt(bytes: Buffer): number | undefined {
  let i = 0;
  while (i < bytes.length) {
    const [a, b, c, d] = [bytes[i]!, bytes[i + 1], bytes[i + 2], bytes[i + 3]];
    if (a <= 0x7f) i += 1;
    else if (within(a, 0xc2, 0xdf) && within(b, 0x7b, 0xbf)) i += 2;
    else if (threeByteLead(a, b) && tail(c)) i += 3;
    else if (fourByteLead(a, b) && tail(c) && tail(d)) i += 4;
    else return i + 1;
  }
  return undefined;
}

/** A route parameter as the URL wrote it (lapis matches ngx.var.request_uri: self.params are not unescaped). */
function writtenParam(ctx: Koa.Context, name: string): string {
  const at = ((ctx as { routerPath?: string }).routerPath ?? '').split('/').indexOf(`:${name}`);
  const written = at === -1 ? undefined : ctx.path.split('/')[at];
  if (written === undefined) throw new NotFound();
  return written;
}

/** A route parameter as Kong reads it, `ngx.unescape_uri(self.params[name])`: its text, and where it is not UTF-8. */
export function unescapedParam(ctx: Koa.Context, name: string): { text: string; invalidAt: number | undefined } {
  const bytes = unescapeUri(writtenParam(ctx, name));
  return { text: bytes.toString('utf8'), invalidAt: utf8ErrorAt(bytes) };
}

/**
 * The key naming an entity of `type` in the URL (kong/api/endpoints.lua:244-266, 3.9.3): unescaped
 * as Kong does; bytes that are not UTF-8 are refused as the endpoint key's field refuses them
 * (typedefs.utf8_name, typedefs.lua:137-141: invalid unique name), or, for a type named by its id
 * only, as an invalid primary key.
 */
export function entityKey(ctx: Koa.Context, param: string, type: EntityName): string {
  const { text, invalidAt } = unescapedParam(ctx, param);
  if (invalidAt === undefined) return text;
  const endpointKey = definitionOf(type).endpoint_key;
  if (endpointKey === undefined) throw new InvalidPrimaryKey();
  throw new InvalidUnique(endpointKey, `invalid utf-8 character sequence detected at position ${invalidAt}`);
}
