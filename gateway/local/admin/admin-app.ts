import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { KongValidationError, schemaViolation } from '../config/entity-schemas.ts';
import { KONG_TAGLINE, KONG_VERSION } from '../kong/version.ts';
import type { PluginRegistry } from '../plugins/registry.ts';
import type { KeyAuthCredential } from '../store/entities.ts';
import { credentialView } from '../store/entity-rules.ts';
import { paginate } from './listing.ts';
import { AdminOperations, NotFound, findConsumer, findNamed, type PluginScope } from './operations.ts';
import { mountSchemaRoutes } from './schemas.ts';

/** Kong's Admin API takes bodies up to nginx_admin_client_max_body_size (kong/templates/kong_defaults.lua). */
export const ADMIN_BODY_LIMIT = '10mb';

/**
 * Entity types of Kong OSS 3.9 that decK reads and the local gateway does not run: their lists
 * answer empty (the gateway holds none), a lookup 404, and a write is refused naming the type.
 */
const NOT_RUN = ['certificates', 'ca_certificates', 'snis', 'upstreams', 'vaults', 'keys', 'key-sets', 'basic-auths', 'hmac-auths', 'jwts', 'acls', 'oauth2'] as const;

export interface AdminAppOptions {
  operations: AdminOperations;
  registry: PluginRegistry;
  nodeId: string;
  now: () => number;
  log: (message: string) => void;
  connections: () => { active: number; handled: number; total: number };
}

const notFound = { message: 'Not found' };

/** A subset of Kong's Admin API (kong/api/*), answering as Kong 3.9 does. */
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
  app.use(koaBody({ json: true, urlencoded: true, text: false, multipart: false, jsonLimit: ADMIN_BODY_LIMIT, formLimit: ADMIN_BODY_LIMIT }));

  const body = (ctx: Koa.Context) => (ctx.request.body ?? {}) as Record<string, unknown>;
  const credentialOut = (credential: KeyAuthCredential) => credentialView(credential, now());

  router.get('/', (ctx) => {
    const available: Record<string, { version: string; priority: number }> = {};
    for (const [name, definition] of registry.definitions) available[name] = { version: definition.version, priority: definition.priority };
    ctx.body = {
      version: KONG_VERSION,
      edition: 'community',
      tagline: KONG_TAGLINE,
      node_id: nodeId,
      hostname: hostname(),
      lua_version: 'Lua 5.4 (wasmoon; production Kong runs LuaJIT)',
      timers: { running: 0, pending: 0 },
      plugins: {
        available_on_server: available,
        enabled_in_cluster: [...new Set(operations.snapshot.list('plugins').map((p) => p.name))].sort(),
      },
      pids: { master: process.pid, workers: [process.pid] },
      // DB mode, as Kong with PostgreSQL answers: decK syncs a database-backed Kong and refuses
      // `database: off` (go-kong information_service.go IsInMemory). The store itself is SQLite.
      configuration: { database: 'postgres', role: 'traditional', router_flavor: 'traditional_compatible', plugins: ['bundled', ...registry.custom] },
    };
  });

  router.get('/status', (ctx) => {
    const { active, handled, total } = options.connections();
    const memory = process.memoryUsage();
    ctx.body = {
      database: { reachable: true },
      server: { connections_accepted: total, connections_active: active, connections_handled: handled, connections_reading: 0, connections_writing: active, connections_waiting: 0, total_requests: handled },
      memory: {
        workers_lua_vms: [{ pid: process.pid, http_allocated_gc: `${(memory.heapUsed / 1048576).toFixed(2)} MiB` }],
        lua_shared_dicts: {},
      },
      configuration_hash: String(operations.snapshot.version).padStart(32, '0'),
    };
  });

  router.get('/plugins/enabled', (ctx) => {
    ctx.body = { enabled_plugins: [...registry.definitions.keys()].sort() };
  });

  // consumers
  router.get('/consumers', (ctx) => {
    ctx.body = paginate(operations.snapshot.list('consumers'), ctx.query, '/consumers');
  });
  router.post('/consumers', async (ctx) => {
    ctx.body = await operations.createConsumer(body(ctx));
    ctx.status = 201;
  });
  router.get('/consumers/:consumer', (ctx) => {
    const consumer = findConsumer(operations.snapshot, ctx.params.consumer!);
    if (!consumer) throw new NotFound();
    ctx.body = consumer;
  });
  router.patch('/consumers/:consumer', async (ctx) => {
    ctx.body = await operations.updateConsumer(ctx.params.consumer!, body(ctx));
  });
  router.put('/consumers/:consumer', async (ctx) => {
    ctx.body = await operations.upsertConsumer(ctx.params.consumer!, body(ctx));
  });
  router.delete('/consumers/:consumer', async (ctx) => {
    await operations.deleteConsumer(ctx.params.consumer!);
    ctx.status = 204;
  });

  // key-auth credentials
  const liveCredentials = (consumerId?: string) =>
    operations.snapshot.list('keyauth_credentials').filter((k) => operations.liveCredential(k) && (!consumerId || k.consumer.id === consumerId));
  router.get('/consumers/:consumer/key-auth', (ctx) => {
    const consumer = findConsumer(operations.snapshot, ctx.params.consumer!);
    if (!consumer) throw new NotFound();
    ctx.body = paginate(liveCredentials(consumer.id), ctx.query, `/consumers/${consumer.id}/key-auth`, credentialOut);
  });
  router.post('/consumers/:consumer/key-auth', async (ctx) => {
    ctx.body = credentialOut(await operations.createCredential(ctx.params.consumer!, body(ctx)));
    ctx.status = 201;
  });
  router.get('/consumers/:consumer/key-auth/:credential', (ctx) => {
    const consumer = findConsumer(operations.snapshot, ctx.params.consumer!);
    const credential = consumer && operations.findCredential(consumer.id, ctx.params.credential!);
    if (!credential) throw new NotFound();
    ctx.body = credentialOut(credential);
  });
  router.patch('/consumers/:consumer/key-auth/:credential', async (ctx) => {
    ctx.body = credentialOut(await operations.updateCredential(ctx.params.consumer!, ctx.params.credential!, body(ctx)));
  });
  router.put('/consumers/:consumer/key-auth/:credential', async (ctx) => {
    ctx.body = credentialOut(await operations.updateCredential(ctx.params.consumer!, ctx.params.credential!, body(ctx), true));
  });
  router.delete('/consumers/:consumer/key-auth/:credential', async (ctx) => {
    await operations.deleteCredential(ctx.params.consumer!, ctx.params.credential!);
    ctx.status = 204;
  });
  router.get('/key-auths', (ctx) => {
    ctx.body = paginate(liveCredentials(), ctx.query, '/key-auths', credentialOut);
  });
  router.get('/key-auths/:credential', (ctx) => {
    const credential = operations.findCredential(undefined, ctx.params.credential!);
    if (!credential) throw new NotFound();
    ctx.body = credentialOut(credential);
  });

  // plugins
  router.get('/plugins', (ctx) => {
    ctx.body = paginate(operations.snapshot.list('plugins'), ctx.query, '/plugins');
  });
  router.post('/plugins', async (ctx) => {
    ctx.body = await operations.createPlugin(body(ctx), {});
    ctx.status = 201;
  });
  router.get('/plugins/:plugin', (ctx) => {
    const plugin = operations.snapshot.get('plugins', ctx.params.plugin!);
    if (!plugin) throw new NotFound();
    ctx.body = plugin;
  });
  router.patch('/plugins/:plugin', async (ctx) => {
    ctx.body = await operations.updatePlugin(ctx.params.plugin!, body(ctx), {});
  });
  router.put('/plugins/:plugin', async (ctx) => {
    ctx.body = await operations.updatePlugin(ctx.params.plugin!, body(ctx), {}, true);
  });
  router.delete('/plugins/:plugin', async (ctx) => {
    await operations.deletePlugin(ctx.params.plugin!, {});
    ctx.status = 204;
  });
  router.get('/consumers/:consumer/plugins', (ctx) => {
    const consumer = findConsumer(operations.snapshot, ctx.params.consumer!);
    if (!consumer) throw new NotFound();
    ctx.body = paginate(operations.snapshot.list('plugins').filter((p) => p.consumer?.id === consumer.id), ctx.query, `/consumers/${consumer.id}/plugins`);
  });
  router.post('/consumers/:consumer/plugins', async (ctx) => {
    ctx.body = await operations.createPlugin(body(ctx), { consumer: ctx.params.consumer! });
    ctx.status = 201;
  });
  router.get('/consumers/:consumer/plugins/:plugin', (ctx) => {
    const consumer = findConsumer(operations.snapshot, ctx.params.consumer!);
    const plugin = operations.snapshot.get('plugins', ctx.params.plugin!);
    if (!consumer || !plugin || plugin.consumer?.id !== consumer.id) throw new NotFound();
    ctx.body = plugin;
  });
  router.patch('/consumers/:consumer/plugins/:plugin', async (ctx) => {
    ctx.body = await operations.updatePlugin(ctx.params.plugin!, body(ctx), { consumer: ctx.params.consumer! });
  });
  router.put('/consumers/:consumer/plugins/:plugin', async (ctx) => {
    ctx.body = await operations.updatePlugin(ctx.params.plugin!, body(ctx), { consumer: ctx.params.consumer! }, true);
  });
  router.delete('/consumers/:consumer/plugins/:plugin', async (ctx) => {
    await operations.deletePlugin(ctx.params.plugin!, { consumer: ctx.params.consumer! });
    ctx.status = 204;
  });

  // services and routes, top level and nested (/services/{s}/routes)
  router.get('/services', (ctx) => {
    ctx.body = paginate(operations.snapshot.list('services'), ctx.query, '/services');
  });
  router.post('/services', async (ctx) => {
    ctx.body = await operations.createService(body(ctx));
    ctx.status = 201;
  });
  router.get('/services/:service', (ctx) => {
    const service = findNamed(operations.snapshot, 'services', ctx.params.service!);
    if (!service) throw new NotFound();
    ctx.body = service;
  });
  router.patch('/services/:service', async (ctx) => {
    ctx.body = await operations.writeService(ctx.params.service!, body(ctx), false);
  });
  router.put('/services/:service', async (ctx) => {
    ctx.body = await operations.writeService(ctx.params.service!, body(ctx), true);
  });
  router.delete('/services/:service', async (ctx) => {
    await operations.deleteService(ctx.params.service!);
    ctx.status = 204;
  });
  for (const prefix of ['', '/services/:service'] as const) {
    const scope = (ctx: Koa.Context) => (prefix ? { service: ctx.params.service! } : {});
    const parent = (ctx: Koa.Context) => {
      if (!prefix) return undefined;
      const service = findNamed(operations.snapshot, 'services', ctx.params.service!);
      if (!service) throw new NotFound();
      return service;
    };
    router.get(`${prefix}/routes`, (ctx) => {
      const service = parent(ctx);
      const routes = operations.snapshot.list('routes').filter((r) => !service || r.service?.id === service.id);
      ctx.body = paginate(routes, ctx.query, service ? `/services/${service.id}/routes` : '/routes');
    });
    router.post(`${prefix}/routes`, async (ctx) => {
      ctx.body = await operations.createRoute(body(ctx), scope(ctx));
      ctx.status = 201;
    });
    router.get(`${prefix}/routes/:route`, (ctx) => {
      const service = parent(ctx);
      const route = findNamed(operations.snapshot, 'routes', ctx.params.route!);
      if (!route || (service && route.service?.id !== service.id)) throw new NotFound();
      ctx.body = route;
    });
    router.patch(`${prefix}/routes/:route`, async (ctx) => {
      ctx.body = await operations.writeRoute(ctx.params.route!, body(ctx), false, scope(ctx));
    });
    router.put(`${prefix}/routes/:route`, async (ctx) => {
      ctx.body = await operations.writeRoute(ctx.params.route!, body(ctx), true, scope(ctx));
    });
    router.delete(`${prefix}/routes/:route`, async (ctx) => {
      await operations.deleteRoute(ctx.params.route!, scope(ctx));
      ctx.status = 204;
    });
  }

  // plugins nested under services and routes
  for (const kind of ['service', 'route'] as const) {
    const base = `/${kind}s/:${kind}/plugins`;
    const scope = (ctx: Koa.Context): PluginScope => ({ [kind]: ctx.params[kind]! });
    const owner = (ctx: Koa.Context) => {
      const entity = findNamed(operations.snapshot, kind === 'service' ? 'services' : 'routes', ctx.params[kind]!);
      if (!entity) throw new NotFound();
      return entity;
    };
    router.get(base, (ctx) => {
      const entity = owner(ctx);
      ctx.body = paginate(operations.snapshot.list('plugins').filter((p) => p[kind]?.id === entity.id), ctx.query, `/${kind}s/${entity.id}/plugins`);
    });
    router.post(base, async (ctx) => {
      ctx.body = await operations.createPlugin(body(ctx), scope(ctx));
      ctx.status = 201;
    });
    router.get(`${base}/:plugin`, (ctx) => {
      const entity = owner(ctx);
      const plugin = operations.snapshot.get('plugins', ctx.params.plugin!);
      if (!plugin || plugin[kind]?.id !== entity.id) throw new NotFound();
      ctx.body = plugin;
    });
    router.patch(`${base}/:plugin`, async (ctx) => {
      ctx.body = await operations.updatePlugin(ctx.params.plugin!, body(ctx), scope(ctx));
    });
    router.put(`${base}/:plugin`, async (ctx) => {
      ctx.body = await operations.updatePlugin(ctx.params.plugin!, body(ctx), scope(ctx), true);
    });
    router.delete(`${base}/:plugin`, async (ctx) => {
      await operations.deletePlugin(ctx.params.plugin!, scope(ctx));
      ctx.status = 204;
    });
  }

  // Kong OSS 3.9 entities the local gateway does not run: none held, none accepted.
  for (const type of NOT_RUN) {
    router.get(`/${type}`, (ctx) => {
      ctx.body = paginate([], ctx.query, `/${type}`);
    });
    router.get(`/${type}/:id`, () => {
      throw new NotFound();
    });
    const refuse = () => {
      throw new KongValidationError(schemaViolation({ '@entity': `${type}: not supported by the local gateway (it runs services, routes, consumers, key-auth credentials and plugins)` }));
    };
    router.post(`/${type}`, refuse);
    router.put(`/${type}/:id`, refuse);
    router.patch(`/${type}/:id`, refuse);
  }
  router.all(['/filter-chains', '/filter-chains/:id'], (ctx) => {
    // kong/api/routes/filter_chains.lua with wasm off (Kong's default)
    ctx.status = 400;
    ctx.body = { message: 'this endpoint is only available when wasm is enabled' };
  });

  mountSchemaRoutes(router, registry);

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
