import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type Router from '@koa/router';

/** The portal's static files, read once at start: every asset is the portal's own (no CDN). */
const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'portal.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('../assets/portal.css', import.meta.url)) },
  // declared by every page (pages/layout.ts): without it a browser asks the gateway's /favicon.ico, a 404
  'favicon.svg': { type: 'image/svg+xml', body: readFileSync(new URL('../assets/favicon.svg', import.meta.url)) },
  'copy.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../assets/copy.js', import.meta.url)) },
  'reference.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../assets/reference.js', import.meta.url)) },
  'usage-chart.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../assets/usage-chart.js', import.meta.url)) },
  // uPlot, the charts' library, from its npm package (a dependency of the portal, not of the browser's network)
  'uPlot.iife.min.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js')) },
  'uPlot.min.css': { type: 'text/css; charset=utf-8', body: readFileSync(createRequire(import.meta.url).resolve('uplot/dist/uPlot.min.css')) },
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
