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
  router.get('/reference/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = spec.json;
  });
  router.get('/reference/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = spec.yaml;
  });
}
