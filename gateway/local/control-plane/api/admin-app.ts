import { performance } from 'node:perf_hooks';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { KongValidationError } from '../schema/entity-schemas.ts';
import { KONG_VERSION } from '../kong-version.ts';
import type { PluginRegistry } from '../../plugins/registry.ts';
import { mountConsumerRoutes } from './consumer-routes.ts';
import { mountNodeRoutes } from './node-routes.ts';
import { AdminOperations, NotFound } from './operations.ts';
import { mountProxyRoutes } from './proxy-routes.ts';
import { mountSchemaRoutes } from './schemas.ts';
import { mountUnsupportedRoutes } from './unsupported-routes.ts';

/** Kong's Admin API takes bodies up to nginx_admin_client_max_body_size (kong/templates/kong_defaults.lua). */
export const ADMIN_BODY_LIMIT = '10mb';

export interface AdminAppOptions {
  operations: AdminOperations;
  registry: PluginRegistry;
  nodeId: string;
  /** The Lua VM's version, as Kong reports it. */
  luaVersion: string;
  now: () => number;
  log: (message: string) => void;
  connections: () => { active: number; handled: number; total: number };
}

const notFound = { message: 'Not found' };

/** Kong's Admin API (kong/api/*) as decK and the provisioning CLI use it, answering as Kong 3.9 does. */
export function createAdminApp(options: AdminAppOptions): Koa {
  const { operations, registry, nodeId, now } = options;
  const app = new Koa();
  const router = new Router();

  app.use(async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
      // Koa turns an unset status into 200 when a body is assigned: set the status after the body.
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.body = notFound;
        ctx.status = 404;
      }
      if (ctx.status === 405 && ctx.body === undefined) {
        ctx.body = { message: 'Method not allowed' };
        ctx.status = 405;
      }
    } catch (error) {
      if (error instanceof NotFound) {
        ctx.status = 404;
        ctx.body = notFound;
      } else if (error instanceof KongValidationError) {
        ctx.status = error.status;
        ctx.body = error.body;
      } else if ((error as { status?: number }).status === 413) {
        ctx.status = 413;
        ctx.body = { message: 'Payload too large' };
      } else if ((error as { status?: number }).status === 400 || (error as { status?: number }).status === 415) {
        ctx.status = 400;
        ctx.body = { message: `Cannot parse JSON body` };
      } else {
        options.log(`admin: ${(error as Error).stack ?? String(error)}`);
        ctx.status = 500;
        ctx.body = { message: 'An unexpected error occurred' };
      }
    }
    ctx.set('X-Kong-Admin-Latency', String(Math.round(performance.now() - started)));
    ctx.set('Server', `kong/${KONG_VERSION}`);
  });
  app.use(koaBody({
    json: true,
    urlencoded: true,
    text: false,
    multipart: false,
    jsonLimit: ADMIN_BODY_LIMIT,
    formLimit: ADMIN_BODY_LIMIT,
  }));

  mountNodeRoutes(router, operations, registry, { nodeId, connections: options.connections, luaVersion: options.luaVersion });
  mountConsumerRoutes(router, operations, now);
  mountProxyRoutes(router, operations);
  mountUnsupportedRoutes(router);
  mountSchemaRoutes(router, registry);

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
