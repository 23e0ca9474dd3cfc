import { isUtf8 } from 'node:buffer';
import type { Middleware } from 'koa';
import { readBodyOnce } from '../../../packages/node-runtime/body-bytes.js';

/** A 4xx whose message the error pages show (app.ts: `expose`). */
const refused = (status: number, message: string) => Object.assign(new Error(message), { status, expose: true });

/** Every name and value of an urlencoded body, as bytes: `+` is a space, `%XY` a byte, as forms encode them. */
function* formParts(raw: Buffer): Generator<Buffer> {
  for (const pair of raw.toString('latin1').split('&')) {
    for (const part of pair.split('=')) {
      const text = part.replaceAll('+', ' ');
      const bytes: number[] = [];
      for (let i = 0; i < text.length; i++) {
        const hex = text[i] === '%' ? text.slice(i + 1, i + 3) : '';
        if (/^[0-9a-fA-F]{2}$/.test(hex)) {
          bytes.push(Number.parseInt(hex, 16));
          i += 2;
        } else {
          bytes.push(text.charCodeAt(i));
        }
      }
      yield Buffer.from(bytes);
    }
  }
}

/**
 * Forms are UTF-8, in their bytes and in what their %XY escapes decode to: anything else (a stray
 * 0xFF, `%FF`, an encoded surrogate) is refused 400 before koa-body, which would decode it to
 * U+FFFD, or keep `%FF` as typed text, and the account would be stored altered (`\ufffd@b.co`).
 * U+0000 is refused too: PostgreSQL (PORTAL_DATABASE_URL) cannot store it in text and would fail 500.
 * The Admin API refuses such bodies too (gateway/local/control-plane/api/utf8-body.ts). A
 * compressed form is refused 415: browsers never send one, and its bytes could not be checked.
 * The body is read once, within `limit` (413 beyond), and handed on to koa-body as the same bytes.
 */
export function utf8Forms(limit: string): Middleware {
  return async (ctx, next) => {
    if (!ctx.is('application/x-www-form-urlencoded')) {
      await next();
      return;
    }
    const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') throw refused(415, 'Forms must be sent without a Content-Encoding.');
    const raw = await readBodyOnce(ctx, limit).catch((error: unknown) => {
      // raw-body's own words ("request entity too large") are not the portal's
      if ((error as { status?: unknown }).status === 413) throw refused(413, `The form is larger than ${limit.replace(/kb$/i, ' KiB')}, more than any of the portal's forms holds. Go back and shorten what you typed.`);
      throw error;
    });
    for (const part of formParts(raw)) {
      if (!isUtf8(part)) throw refused(400, 'The form is not valid UTF-8 text. Reload the page and type it again.');
      if (part.includes(0)) throw refused(400, 'The form holds a NUL character (U+0000), which no field accepts.');
    }
    await next();
  };
}
