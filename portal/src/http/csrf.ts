import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { BASE } from '../paths.ts';
import { newToken } from '../tokens.ts';
import { CSRF_COOKIE, readSignedCookie, setCsrfCookie } from './cookies.ts';

declare module 'koa' {
  interface DefaultState {
    /** The CSRF token of this browser, which every form of the page carries. */
    csrf: string;
  }
}

/** A new token for this browser (at sign-in and sign-out: a token seen before is not carried across). */
export function renewCsrf(ctx: Context): void {
  ctx.state.csrf = newToken();
  setCsrfCookie(ctx, ctx.state.csrf);
}

/**
 * A signed-in browser's token: derived from its session's id (a secret only its HttpOnly cookie
 * holds), so a CSRF cookie planted from another browser opens nothing, and a session's token ends
 * with it. One way: a token read from a page does not give the session's id.
 */
export const sessionCsrf = (sessionId: string) => createHmac('sha256', sessionId).update('portal csrf').digest('base64url');

/** Compared as bytes: a field as long as the cookie in characters may be longer in bytes (é), which timingSafeEqual throws on. */
function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Hosts a browser treats as secure over plain HTTP, keeping Secure cookies there: loopback. */
const isLoopback = (hostname: string) =>
  /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[?::1\]?)$/i.test(hostname.replace(/\.$/, ''));

/**
 * Why a POST without its CSRF cookie came without it. The cookies are Secure, and a browser drops
 * them over plain HTTP but on loopback: there every form would be refused as expired, forever.
 */
function missingCookieReason(ctx: Context): string | undefined {
  if (ctx.protocol !== 'http' || ctx.hostname === '' || isLoopback(ctx.hostname)) return undefined;
  return `The portal needs HTTPS (or localhost): over plain HTTP your browser drops its cookies, so no form can be sent. Open https://${ctx.hostname}${BASE}/ instead.`;
}

/**
 * Signed double-submit before sign-in: the token lives in a signed, HttpOnly, SameSite=Strict
 * cookie and in a hidden field of every form; once signed in, the field must hold the session's
 * token (sessionCsrf). A POST whose field does not match is refused (403) before any handler runs,
 * as is one a browser marks as sent by another site. Runs after the session middleware.
 */
export function csrfProtection(refuse: (ctx: Context, reason: string) => void): Middleware {
  return async (ctx, next) => {
    const cookie = readSignedCookie(ctx, CSRF_COOKIE);
    const expected = ctx.state.sessionId ? sessionCsrf(ctx.state.sessionId) : cookie;
    if (ctx.method === 'POST') {
      const field = (ctx.request.body as Record<string, unknown> | undefined)?._csrf;
      if (ctx.get('Sec-Fetch-Site') === 'cross-site') return refuse(ctx, 'This form was sent from another site.');
      if (!expected || typeof field !== 'string' || !same(expected, field)) {
        const reason = cookie || ctx.state.sessionId ? undefined : missingCookieReason(ctx);
        return refuse(ctx, reason ?? 'This form has expired or did not come from this portal. Reload the page and try again.');
      }
    }
    if (!cookie) renewCsrf(ctx);
    if (expected) ctx.state.csrf = expected;
    await next();
  };
}
