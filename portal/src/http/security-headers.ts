import type { Middleware } from 'koa';

/**
 * Every answer: scripts and styles only from the portal's own files (no inline script or style),
 * forms only to the portal, no framing, no referrer (an invitation link holds its token), no
 * caching of pages (a key page must not outlive its response).
 */
const DIRECTIVES: Record<string, string> = {
  'default-src': "'none'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self'",
  'connect-src': "'self'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
  'base-uri': "'none'",
};

/** The policy, with some directives replaced for one page (the API reference's: pages/reference-page.ts). */
export function contentSecurityPolicy(replaced: Record<string, string> = {}): string {
  return Object.entries({ ...DIRECTIVES, ...replaced })
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

const CSP = contentSecurityPolicy();

export const securityHeaders: Middleware = async (ctx, next) => {
  ctx.set({
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  });
  await next();
};
