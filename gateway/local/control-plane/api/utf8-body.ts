import { isUtf8 } from 'node:buffer';
import type { Middleware } from 'koa';
import { readBodyOnce } from '../../../../packages/node-runtime/body-bytes.js';
import { tooManyArguments } from './arguments.ts';

/** An error whose status koa's error handling and admin-app's read (raw-body's carry one too). */
const malformed = () => Object.assign(new Error('the request body is not valid UTF-8'), { status: 400 });

/**
 * Admin API bodies (JSON, forms) are UTF-8: a body that is not is refused whole, before koa-body,
 * which decodes leniently and would store U+FFFD where the bytes were. (Kong passes the bytes on
 * and PostgreSQL refuses them with a 500.) The body is read once, within `limit` (413 beyond),
 * and handed on to the body parser as the same bytes.
 */
export function utf8Bodies(limit: string): Middleware {
  return async (ctx, next) => {
    const { headers } = ctx.req;
    const length = headers['content-length'];
    if (length === undefined ? headers['transfer-encoding'] === undefined : Number(length) === 0) {
      await next();
      return;
    }
    const raw = await readBodyOnce(ctx, limit);
    (ctx.state as { bodyBytes?: number }).bodyBytes = raw.length;
    if (!isUtf8(raw)) throw malformed();
    // arguments.lua:508-513 (3.9.3): a form of more than 1000 fields is refused, not truncated
    if (ctx.get('Content-Type').toLowerCase().startsWith('application/x-www-form-urlencoded') && tooManyArguments(raw.toString('latin1'))) {
      ctx.status = 400;
      ctx.body = { message: 'Too many arguments' };
      return;
    }
    await next();
  };
}
