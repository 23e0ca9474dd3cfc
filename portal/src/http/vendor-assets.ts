import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type Router from '@koa/router';

/**
 * Swagger UI's files from the `swagger-ui-dist` package in node_modules, served by the portal
 * itself (no CDN). Their URL carries the package's version, so a browser may keep them for a year:
 * an upgrade changes the URL. The bundle is 1.7 MB, 0.5 MB gzipped: gzipped once, on first demand.
 */
const require = createRequire(import.meta.url);
const DIST = dirname(require.resolve('swagger-ui-dist/package.json'));
const { version } = JSON.parse(readFileSync(join(DIST, 'package.json'), 'utf8')) as { version: string };

const FILES: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};

/** Where the reference page links them: `${SWAGGER_UI_PATH}/swagger-ui-bundle.js`, under the portal's base. */
export const SWAGGER_UI_PATH = `/assets/swagger-ui/${version}`;

const gzipped = new Map<string, Promise<Buffer>>();

export function vendorAssetRoutes(router: Router): void {
  const bodies = new Map(Object.keys(FILES).map((name) => [name, readFileSync(join(DIST, name))]));
  router.get(`${SWAGGER_UI_PATH}/:name`, async (ctx) => {
    const name = ctx.params.name!;
    const body = bodies.get(name);
    if (!body) return;
    ctx.type = FILES[name]!;
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.vary('Accept-Encoding');
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      if (!gzipped.has(name)) gzipped.set(name, promisify(gzip)(body));
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = await gzipped.get(name)!;
    } else {
      ctx.body = body;
    }
  });
}
