import { readFileSync } from 'node:fs';
import type Router from '@koa/router';

/** The portal's static files, read once at start: every asset is the portal's own (no CDN). */
const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'portal.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('../assets/portal.css', import.meta.url)) },
  'copy.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../assets/copy.js', import.meta.url)) },
  'reference.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../assets/reference.js', import.meta.url)) },
};

export function assetRoutes(router: Router): void {
  router.get('/assets/:name', (ctx) => {
    const asset = Object.hasOwn(ASSETS, ctx.params.name!) ? ASSETS[ctx.params.name!] : undefined;
    if (!asset) return;
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = asset.body;
  });
}
