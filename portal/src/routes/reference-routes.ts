import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import { pageContext, sendPage } from '../http/state.ts';
import { contentSecurityPolicy } from '../http/security-headers.ts';
import { referencePage } from '../pages/reference-page.ts';
import { referenceSpec } from '../reference.ts';

/**
 * The API reference, readable without signing in (the API's description is public): the page, and
 * the description with `servers` set to the API base URL, as JSON (what the page renders) and YAML.
 */
export function referenceRoutes(router: Router, apiUrl: string): void {
  const spec = referenceSpec(apiUrl);
  // "try it" calls the API: the page's own origin when the gateway serves both (the default), else the API's
  const apiOrigin = new URL(apiUrl).origin;
  const csp = contentSecurityPolicy({ 'connect-src': `'self' ${apiOrigin}`, 'img-src': "'self' data:" });

  router.get('/reference', (ctx) => {
    sendPage(ctx, 200, referencePage(pageContext(ctx), apiUrl, spec.bearerScheme));
    ctx.set('Content-Security-Policy', csp);
  });
  describe(router, '/reference/openapi.json', 'application/json', spec.json);
  describe(router, '/reference/openapi.yaml', 'application/yaml; charset=utf-8', spec.yaml);
}

/** The description at `path`: revalidated on each use (no-cache), a 304 while its ETag holds. */
function describe(router: Router, path: string, type: string, body: string): void {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  router.get(path, (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', etag);
    ctx.status = 200; // Koa's `fresh` compares validators on a 2xx only
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = type;
    ctx.body = body;
  });
}
