import type { Context } from 'koa';
import { BASE } from '../paths.ts';

export const SESSION_COOKIE = 'portal_session';
export const CSRF_COOKIE = 'portal_csrf';

/**
 * Signed (Koa's keys: a `.sig` cookie beside each), HttpOnly, Secure, limited to the portal's
 * path. Secure even when the portal itself is reached over plain HTTP on loopback: TLS ends at
 * the gateway in production, and browsers keep Secure cookies for http://localhost.
 */
function set(ctx: Context, name: string, value: string | null, options: { sameSite: 'lax' | 'strict'; maxAgeMs?: number }): void {
  ctx.cookies.secure = true; // Koa refuses Secure on a request it sees as plain HTTP otherwise
  ctx.cookies.set(name, value, {
    signed: true,
    httpOnly: true,
    secure: true,
    sameSite: options.sameSite,
    path: `${BASE}/`,
    ...(options.maxAgeMs !== undefined ? { maxAge: options.maxAgeMs } : {}),
    overwrite: true,
  });
}

export function readSignedCookie(ctx: Context, name: string): string | undefined {
  return ctx.cookies.get(name, { signed: true }) || undefined;
}

export const setSessionCookie = (ctx: Context, id: string, maxAgeMs: number) => set(ctx, SESSION_COOKIE, id, { sameSite: 'lax', maxAgeMs });
export const clearSessionCookie = (ctx: Context) => set(ctx, SESSION_COOKIE, null, { sameSite: 'lax' });
/** A browser-session cookie: it ends with the browser, or is replaced at sign-in and sign-out. */
export const setCsrfCookie = (ctx: Context, token: string) => set(ctx, CSRF_COOKIE, token, { sameSite: 'strict' });
