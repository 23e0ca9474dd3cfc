import { Readable } from 'node:stream';
import getRawBody from 'raw-body';

/**
 * Reads a koa request's body once, within `limit` (raw-body's 413 beyond), and puts back in its
 * place a stream of the same bytes with the same headers, which koa-body (co-body, raw-body,
 * inflate) then reads as it would have read the request: what a middleware that must check the
 * bytes before koa-body decodes them (leniently: U+FFFD for invalid UTF-8) needs.
 *
 * @param {import('koa').Context} ctx
 * @param {string} limit
 * @returns {Promise<Buffer>}
 */
export async function readBodyOnce(ctx, limit) {
  const { headers } = ctx.req;
  const raw = await getRawBody(ctx.req, { length: headers['content-length'], limit });
  ctx.req = Object.assign(Readable.from([raw]), { headers });
  return raw;
}
