import type Router from '@koa/router';
import type Koa from 'koa';
import type { KeyAuthCredential } from '../db/entities.ts';
import { credentialView } from '../db/entity-rules.ts';
import { paginate } from './listing.ts';
import { NotFound, findConsumer, findPlugin, type AdminOperations } from './operations.ts';

const body = (ctx: Koa.Context) => (ctx.request.body ?? {}) as Record<string, unknown>;

/** Consumers, their key-auth credentials and their plugins (kong/api/routes/consumers.lua, key-auth's api). */
export function mountConsumerRoutes(router: Router, operations: AdminOperations, now: () => number): void {
  const credentialOut = (credential: KeyAuthCredential) => credentialView(credential, now());

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
  // Top level, a credential is reached by id or key; its consumer is the one it belongs to.
  const owner = (idOrKey: string) => {
    const credential = operations.findCredential(undefined, idOrKey);
    if (!credential) throw new NotFound();
    return credential.consumer.id;
  };
  router.patch('/key-auths/:credential', async (ctx) => {
    ctx.body = credentialOut(await operations.updateCredential(owner(ctx.params.credential!), ctx.params.credential!, body(ctx)));
  });
  router.delete('/key-auths/:credential', async (ctx) => {
    const credential = operations.findCredential(undefined, ctx.params.credential!);
    if (credential) await operations.deleteCredential(credential.consumer.id, credential.id);
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
    const plugin = findPlugin(operations.snapshot, ctx.params.plugin!);
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

}
