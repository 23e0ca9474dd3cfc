import test from 'ava';
import type { PluginConfig, PluginDefinition, PluginEnvironment } from '../../../gateway/local/plugins/plugin.ts';
import { ClientBodyError } from '../../../gateway/local/proxy/client-body.ts';
import { FilterAbort, PhaseRunner, type Step } from '../../../gateway/local/proxy/phase-runner.ts';
import { RAW_BODY_LIMIT, RequestContext } from '../../../gateway/local/proxy/request-context.ts';

const logs: string[] = [];
const env: PluginEnvironment = {
  now: () => 0,
  findConsumer: () => undefined,
  findCredential: () => undefined,
  counters: { get: () => 0, increment: () => 1 },
  log: (level, message) => logs.push(`${level}: ${message}`),
};
const runner = new PhaseRunner(env);
const config = { __plugin_id: 'p', __route_id: null, __service_id: null, __consumer_id: null } as PluginConfig;
const step = (definition: Partial<PluginDefinition>): Step => [{ name: 'probe', priority: 1, version: '1', configFields: [], ...definition }, config];
const context = () =>
  new RequestContext({ id: 'r', startedAt: 0, method: 'GET', scheme: 'http', host: 'h', port: 8000, path: '/', query: '', headers: new Map(), clientIp: '127.0.0.1' });

// kong/init.lua (3.9.3) execute_collecting_plugins_iterator and execute_collected_plugins_iterator.

test('an exit in access becomes the response; the source is "exit"', async (t) => {
  const ctx = context();
  const exit = await runner.rewriteOrAccess(step({ access: (c) => c.exit(418, { message: 'teapot' }) }), 'access', ctx);
  t.deepEqual(exit, { status: 418, body: { message: 'teapot' }, headers: undefined });
  t.is(ctx.source, 'exit');
});

test('an error in access is logged and answered 500 with source "error"', async (t) => {
  const ctx = context();
  const exit = await runner.rewriteOrAccess(step({ access: () => { throw new Error('boom'); } }), 'access', ctx);
  t.deepEqual(exit, { status: 500, body: { message: 'An unexpected error occurred' } });
  t.is(ctx.source, 'error');
  t.true(logs.some((line) => line === 'err: probe (access): boom'));
});

test('a body the client broke while a plugin read it: 400 through the error page, logged as info', async (t) => {
  const ctx = context();
  const exit = await runner.rewriteOrAccess(step({ access: () => Promise.reject(new ClientBodyError('bad chunk')) }), 'access', ctx);
  t.deepEqual(exit, { status: 400 });
  t.is(ctx.source, 'error');
});

test('source precedence: an error is never hidden by a later exit, an exit wins over the service', (t) => {
  const ctx = context();
  t.is(ctx.source, 'error', 'nothing happened yet');
  ctx.markProxied();
  t.is(ctx.source, 'service');
  ctx.markExited();
  t.is(ctx.source, 'exit');
  ctx.markUnexpected();
  ctx.markExited();
  t.is(ctx.source, 'error');
});

test('an exit in header_filter ends the phase: later handlers do not run', (t) => {
  const ctx = context();
  let later = false;
  const exit = runner.headerFilter([step({ header_filter: (c) => c.exit(200, 'replaced') }), step({ header_filter: () => { later = true; } })], ctx);
  t.is(exit?.body, 'replaced');
  t.false(later);
});

test('an error in header_filter or body_filter aborts the request (FilterAbort)', async (t) => {
  const ctx = context();
  t.throws(() => runner.headerFilter([step({ header_filter: () => { throw new Error('hf'); } })], ctx), { instanceOf: FilterAbort });
  await t.throwsAsync(runner.bodyFilter([step({ body_filter: () => { throw new Error('bf'); } })], ctx, Buffer.from('x'), true), { instanceOf: FilterAbort });
});

test('body_filter runs per chunk; get_raw_body buffers until eof, as kong/pdk/response.lua does', async (t) => {
  const ctx = context();
  const seen: Array<string | undefined> = [];
  const filters = [step({ body_filter: (c) => void seen.push(c.getRawBody()?.toString()) })];
  const first = await runner.bodyFilter(filters, ctx, Buffer.from('ab'), false);
  const second = await runner.bodyFilter(filters, ctx, Buffer.from('cd'), true);
  t.deepEqual(seen, [undefined, 'abcd']);
  t.is(first.chunk.length, 0, 'held back while buffering');
  t.is(second.chunk.toString(), 'abcd');
});

test('body_filter without get_raw_body passes chunks through; set_raw_body replaces and ends the body', async (t) => {
  const ctx = context();
  const pass = await runner.bodyFilter([step({ body_filter: () => undefined })], ctx, Buffer.from('chunk'), false);
  t.deepEqual([pass.chunk.toString(), pass.eof], ['chunk', false]);
  const replaced = await runner.bodyFilter([step({ body_filter: (c) => c.setRawBody('new') })], ctx, Buffer.from('old'), false);
  t.deepEqual([replaced.chunk.toString(), replaced.eof], ['new', true]);
});

test('get_raw_body has a bound: past it the request is aborted, not buffered further', async (t) => {
  const ctx = context();
  const filters = [step({ body_filter: (c) => void c.getRawBody() })];
  const big = Buffer.alloc(RAW_BODY_LIMIT / 2 + 1);
  await runner.bodyFilter(filters, ctx, big, false);
  await t.throwsAsync(runner.bodyFilter(filters, ctx, big, false), { instanceOf: FilterAbort });
});
