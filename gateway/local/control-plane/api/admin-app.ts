import { performance } from 'node:perf_hooks';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { EntityService } from '../db/entity-service.ts';
import { SERVER_TOKENS } from '../kong-version.ts';
import { KongError, MethodNotAllowed, NotFound } from '../schema/errors.ts';
import type { PluginRegistry } from '../schema/plugins/registry.ts';
import type { DataPlaneNode } from '../snapshot/cluster-listener.ts';
import { mountAclRoutes } from './acls.ts';
import { queryArgumentLimit } from './arguments.ts';
import { certificatesBySni, mountCertificateRoutes } from './certificates.ts';
import { mountConsumerRoutes } from './consumers.ts';
import { mountEntityEndpoints } from './endpoints.ts';
import { mountMetricsRoute, type NodeStatusApi } from './metrics-route.ts';
import { mountNodeRoutes, type NodeInfo } from './node-routes.ts';
import { mountPluginRoutes } from './plugins.ts';
import { MULTIPART_AS_FIELDS, nestedMultipartNames } from './multipart.ts';
import { corsFilter, emptyJsonBody, kongBodyTypes, loneSurrogateJson, mediaTypeFilter, methodNotAllowed, optionsMethod, routesOf, traceRefused } from './request-filters.ts';
import { mountSchemaRoutes } from './schemas.ts';
import { mountSniRoutes } from './snis.ts';
import { mountTagRoutes } from './tags.ts';
import { mountUnsupportedRoutes } from './unsupported-routes.ts';
import { utf8Bodies } from './utf8-body.ts';

/** Kong's Admin API takes bodies up to nginx_admin_client_max_body_size (kong/templates/kong_defaults.lua). */
export const ADMIN_BODY_LIMIT = '10mb';

export interface AdminAppOptions {
  service: EntityService;
  registry: PluginRegistry;
  nodeId: string;
  role: NodeInfo['role'];
  /** The data plane's LuaJIT version, as Kong reports it. */
  luaVersion: string;
  logLevel: string;
  now: () => number;
  log: (message: string) => void;
  serverStatus?: NodeInfo['serverStatus'];
  proxyListeners?: NodeInfo['proxyListeners'];
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

/** The status koa-body's errors (413, 400, 415) carry. */
const httpStatus = (error: unknown): number | undefined =>
  typeof error === 'object' && error !== null && 'status' in error && typeof error.status === 'number' ? error.status : undefined;

/**
 * Pipelined requests on one connection run one after the other, as nginx reads the next one only
 * once the previous is answered (ngx_http_set_keepalive): Node parses them all at once, so a
 * DELETE pipelined after a PUT could run before the PUT was stored.
 */
function oneAtATimePerConnection(): Koa.Middleware {
  const last = new WeakMap<object, Promise<void>>();
  return async (ctx, next) => {
    const socket = ctx.req.socket;
    const previous = last.get(socket);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    last.set(socket, mine);
    try {
      if (previous) await previous;
      await next();
    } finally {
      done();
      if (last.get(socket) === mine) last.delete(socket);
    }
  };
}

export interface AdminApp {
  app: Koa;
  /** Whether a route takes `path` with some method (a method it does not take is then 405, not 404). */
  servesPath: (path: string) => boolean;
}

/** Kong's Admin API (kong/api/*) as decK and the provisioning CLI use it, answering as Kong 3.9 does. */
export function createAdminApp(options: AdminAppOptions): AdminApp {
  const { service, registry, nodeId } = options;
  const app = new Koa();
  const router = new Router();

  app.use(traceRefused);
  app.use(oneAtATimePerConnection());
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
      const status = httpStatus(error);
      if (error instanceof NotFound) {
        ctx.status = 404;
        ctx.body = notFound;
      } else if (error instanceof MethodNotAllowed) {
        ctx.status = 405;
        ctx.body = { message: 'Method not allowed' };
      } else if (error instanceof KongError) {
        ctx.status = error.status;
        ctx.body = error.body;
      } else if (status === 413) {
        ctx.status = 413;
        ctx.body = { message: 'Payload too large' };
      } else if (status === 400 || status === 415) {
        ctx.status = 400;
        ctx.body = { message: `Cannot parse JSON body` };
      } else {
        options.log(`admin: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        ctx.status = 500;
        ctx.body = { message: 'An unexpected error occurred' };
      }
    }
    ctx.set('X-Kong-Admin-Latency', String(Math.round(performance.now() - started)));
    ctx.set('Server', SERVER_TOKENS);
    // as nginx answers a kept-alive request: Connection: keep-alive and no Keep-Alive header, which
    // node adds with its own timeout unless the response names the connection itself
    if (ctx.res.shouldKeepAlive) ctx.set('Connection', 'keep-alive');
  });
  app.use(corsFilter);
  app.use(mediaTypeFilter);
  app.use(queryArgumentLimit);
  app.use(utf8Bodies(ADMIN_BODY_LIMIT));
  app.use(kongBodyTypes);
  app.use(koaBody({
    json: true,
    urlencoded: true,
    text: false,
    multipart: true,
    formidable: MULTIPART_AS_FIELDS,
    // Kong reads a multipart body it cannot parse as no arguments (kong/api/arguments.lua load)
    onError: (error, ctx) => {
      if (!ctx.request.is('multipart')) throw error;
      ctx.request.body = {};
    },
    jsonLimit: ADMIN_BODY_LIMIT,
    formLimit: ADMIN_BODY_LIMIT,
  }));
  app.use(nestedMultipartNames);
  app.use(loneSurrogateJson);

  router.use(emptyJsonBody);
  mountNodeRoutes(router, service, registry, {
    nodeId,
    role: options.role,
    luaVersion: options.luaVersion,
    logLevel: options.logLevel,
    serverStatus: options.serverStatus,
    proxyListeners: options.proxyListeners,
  });
  mountSchemaRoutes(router, registry, service);
  // Kong's custom routes (kong/api/routes/*.lua) before the generic ones they extend.
  mountConsumerRoutes(router, service);
  mountAclRoutes(router, service);
  mountCertificateRoutes(router);
  mountPluginRoutes(router, service, registry);
  mountSniRoutes(router);
  mountTagRoutes(router, service);
  mountEntityEndpoints(router, service);
  mountUnsupportedRoutes(router, service);
  // kong/api/routes/clustering.lua: the data planes this control plane serves.
  router.get('/clustering/data-planes', (ctx) => {
    ctx.body = { data: options.dataPlanes?.() ?? [], next: null };
  });

  mountMetricsRoute(router, { node: options.nodeStatus, nodeId, dataPlanes: () => options.dataPlanes?.() ?? [], log: options.log });

  app.use(certificatesBySni(service));
  app.use(optionsMethod(router));
  app.use(methodNotAllowed(router));
  app.use(router.routes());
  return { app, servesPath: (path) => routesOf(router, path).length > 0 };
}
