import { performance } from 'node:perf_hooks';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { KongValidationError } from '../schema/entity-schemas.ts';
import { KONG_VERSION } from '../kong-version.ts';
import type { PluginRegistry } from '../schema/plugins/registry.ts';
import type { DataPlaneNode } from '../snapshot/cluster-listener.ts';
import { mountConsumerRoutes } from './consumer-routes.ts';
import { mountMetricsRoute, type NodeStatusApi } from './metrics-route.ts';
import { mountNodeRoutes, type NodeInfo } from './node-routes.ts';
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
  role: NodeInfo['role'];
  /** The data plane's LuaJIT version, as Kong reports it. */
  luaVersion: string;
  now: () => number;
  log: (message: string) => void;
  serverStatus?: NodeInfo['serverStatus'];
  configurationHash: NodeInfo['configurationHash'];
  /**
   * Resolves when every data-plane node runs the current configuration (bounded): a write is
   * answered once it is live on every node.
   */
  settled?: () => Promise<void>;
  /** The data-plane nodes seen, for `GET /clustering/data-planes`. */
  dataPlanes?: () => DataPlaneNode[];
  /** The embedded data-plane node's Status API (one gateway); none for a cluster's control plane. */
  nodeStatus?: NodeStatusApi;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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
      if (options.settled && WRITE_METHODS.has(ctx.method) && ctx.status < 400) await options.settled();
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

  mountNodeRoutes(router, operations, registry, {
    nodeId,
    role: options.role,
    luaVersion: options.luaVersion,
    serverStatus: options.serverStatus,
    configurationHash: options.configurationHash,
  });
  mountConsumerRoutes(router, operations, now);
  mountProxyRoutes(router, operations);
  mountUnsupportedRoutes(router);
  mountSchemaRoutes(router, registry);
  // kong/api/routes/clustering.lua: the data planes this control plane serves.
  router.get('/clustering/data-planes', (ctx) => {
    ctx.body = { data: options.dataPlanes?.() ?? [], next: null };
  });

  mountMetricsRoute(router, { node: options.nodeStatus, nodeId, dataPlanes: () => options.dataPlanes?.() ?? [], log: options.log });

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
