import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { KongValidationError } from '../config/entity-schemas.ts';
import { KONG_TAGLINE, KONG_VERSION } from '../kong/version.ts';
import type { PluginRegistry } from '../plugins/registry.ts';
import type { KeyAuthCredential } from '../store/entities.ts';
import { paginate } from './listing.ts';
import { AdminOperations, NotFound, findConsumer } from './operations.ts';

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

/** A subset of Kong's Admin API (kong/api/*), answering as Kong 3.9 does. */
export function createAdminApp(options: AdminAppOptions): Koa {
  const { operations, registry, nodeId, now } = options;
  const app = new Koa();
  const router = new Router();

  app.use(async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) ctx.body = notFound;
      if (ctx.status === 405 && ctx.body === undefined) ctx.body = { message: 'Method not allowed' };
    } catch (error) {
      if (error instanceof NotFound) {
        ctx.status = 404;
        ctx.body = notFound;
      } else if (error instanceof KongValidationError) {
        ctx.status = error.status;
        ctx.body = error.body;
      } else if ((error as { status?: number }).status === 400) {
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
  app.use(koaBody({ json: true, urlencoded: true, text: false, multipart: false, jsonLimit: '1mb' }));

  const body = (ctx: Koa.Context) => (ctx.request.body ?? {}) as Record<string, unknown>;
  const credentialOut = (credential: KeyAuthCredential) => {
    const { expires_at, ttl: _ttl, ...rest } = credential;
    return expires_at === null ? rest : { ...rest, ttl: Math.max(0, Math.ceil((expires_at - now()) / 1000)) };
  };

  router.get('/', (ctx) => {
    const available: Record<string, { version: string; priority: number }> = {};
    for (const [name, definition] of registry.definitions) available[name] = { version: definition.version, priority: definition.priority };
    ctx.body = {
      version: KONG_VERSION,
      edition: 'community',
      tagline: KONG_TAGLINE,
      node_id: nodeId,
      hostname: hostname(),
      lua_version: options.luaVersion,
      timers: { running: 0, pending: 0 },
      plugins: {
        available_on_server: available,
        enabled_in_cluster: [...new Set(operations.snapshot.list('plugins').map((p) => p.name))].sort(),
      },
      pids: { master: process.pid, workers: [process.pid] },
      configuration: { database: 'sqlite (local gateway)', router_flavor: 'traditional_compatible', plugins: ['bundled', ...registry.custom] },
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

  // read-only views of the declarative layer
  for (const type of ['services', 'routes'] as const) {
    router.get(`/${type}`, (ctx) => {
      ctx.body = paginate(operations.snapshot.list(type), ctx.query, `/${type}`);
    });
    router.get(`/${type}/:id`, (ctx) => {
      const id = ctx.params.id!;
      const entity = operations.snapshot.get(type, id) ?? operations.snapshot.list(type).find((e) => e.name === id);
      if (!entity) throw new NotFound();
      ctx.body = entity;
    });
  }

  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
