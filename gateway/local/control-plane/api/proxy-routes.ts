import type Router from '@koa/router';
import type Koa from 'koa';
import { paginate } from './listing.ts';
import { NotFound, findNamed, findPlugin, type AdminOperations, type PluginScope } from './operations.ts';

const body = (ctx: Koa.Context) => (ctx.request.body ?? {}) as Record<string, unknown>;

/** Services, routes and plugins, top level and nested (kong/api/routes/plugins.lua, endpoints.lua). */
export function mountProxyRoutes(router: Router, operations: AdminOperations): void {
  // plugins
  router.get('/plugins', (ctx) => {
    ctx.body = paginate(operations.snapshot.list('plugins'), ctx.query, '/plugins');
  });
  router.post('/plugins', async (ctx) => {
    ctx.body = await operations.createPlugin(body(ctx), {});
    ctx.status = 201;
  });
  router.get('/plugins/:plugin', (ctx) => {
    const plugin = findPlugin(operations.snapshot, ctx.params.plugin!);
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
    const scope = (ctx: Koa.Context) => (prefix ? { service: (ctx.params as Record<string, string>).service! } : {});
    const parent = (ctx: Koa.Context) => {
      if (!prefix) return undefined;
      const service = findNamed(operations.snapshot, 'services', (ctx.params as Record<string, string>).service!);
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
    const scope = (ctx: Koa.Context): PluginScope => ({ [kind]: (ctx.params as Record<string, string>)[kind]! });
    const owner = (ctx: Koa.Context) => {
      const entity = findNamed(operations.snapshot, kind === 'service' ? 'services' : 'routes', (ctx.params as Record<string, string>)[kind]!);
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
      const plugin = findPlugin(operations.snapshot, ctx.params.plugin!);
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

}
