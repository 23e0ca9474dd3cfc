import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { headerMapFrom } from '../../gateway/local/kong/headers.ts';
import { LuaPluginHost } from '../../gateway/local/lua/lua-plugin-host.ts';
import type { LuaVmKind } from '../../gateway/local/lua/vm/lua-vm.ts';
import { keyAuth } from '../../gateway/local/plugins/key-auth.ts';
import type { PluginConfig, PluginEnvironment } from '../../gateway/local/plugins/plugin.ts';
import { rateLimiting } from '../../gateway/local/plugins/rate-limiting.ts';
import { requestSizeLimiting } from '../../gateway/local/plugins/request-size-limiting.ts';
import { addKongHeaders, copyUpstreamHeaders } from '../../gateway/local/proxy/response-headers.ts';
import { RequestContext } from '../../gateway/local/proxy/request-context.ts';
import { ExpiringCounters } from '../../gateway/local/runtime/counters.ts';
import type { Consumer, KeyAuthCredential } from '../../gateway/local/control-plane/db/entities.ts';
import { progress } from './load.ts';
import { leastCpuMicrosPerRequest } from './least-cpu.ts';

const EDGE = 'animal-store-edge';
const KEY = 'ask_k2JbQm1yQ0Yy9Q3bWv8cX2ZLr5pN7tHf4sDg6aE0uIo';

/** The plugins' configs as gateway/kong.yml declares them, with the fields PluginSet adds. */
function declared(name: string, extra: object = {}): PluginConfig {
  const plugins = (parse(readFileSync('gateway/kong.yml', 'utf8')) as { plugins: Array<{ name: string; config: object }> }).plugins;
  const config = plugins.find((plugin) => plugin.name === name)?.config ?? {};
  return { ...config, ...extra, __plugin_id: `bench-${name}`, __route_id: null, __service_id: null, __consumer_id: null };
}

/** Headers as the backend sends them for GET /pets?limit=20 (undici's object: lower-case names). */
const UPSTREAM_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': '2519',
  link: '</pets?limit=20&cursor=eyJpZCI6MjB9>; rel="next"',
  'x-request-id': '6c1f3e1a-9d07-4c1a-8f55-1f1d1c4c7a10',
  date: 'Mon, 23 Nov 2026 08:00:00 GMT',
  connection: 'keep-alive',
  'keep-alive': 'timeout=5',
};

export interface PieceCost {
  name: string;
  /** CPU µs per request, the request's own bookkeeping (context, upstream headers) subtracted. */
  micros: number;
}

/**
 * What each piece of the benchmark's plugin chain costs per request, in process and without HTTP:
 * the same plugin definitions and RequestContext the proxy uses, for an authenticated GET that
 * the backend answers 200. Each piece is measured on top of the request's bookkeeping (a context
 * with the client's headers, the upstream's response headers copied in), which is subtracted.
 */
export async function benchChainPieces(
  options: { seconds: number; vm: LuaVmKind },
): Promise<{ pieces: PieceCost[]; bookkeepingMicros: number }> {
  const host = await LuaPluginHost.create({ sharedDicts: ['animal_store_edge'], nodeId: 'bench', vm: { kind: options.vm } });
  const edge = host.loadPlugin('gateway/plugins', EDGE);
  const edgeConfig = declared(EDGE);
  host.setConfig(EDGE, edgeConfig);
  const consumer: Consumer = { id: 'c0ffee00-0000-4000-8000-000000000001', username: 'bench', custom_id: null, tags: null, created_at: 0, updated_at: 0 };
  const credential: KeyAuthCredential = {
    id: 'c0ffee00-0000-4000-8000-000000000002', consumer: { id: consumer.id }, key: KEY, tags: null, ttl: null, created_at: 0, expires_at: null,
  };
  const env: PluginEnvironment = {
    now: () => Date.now(),
    findConsumer: (id) => (id === consumer.id ? consumer : undefined),
    findCredential: (key) => (key === KEY ? credential : undefined),
    counters: new ExpiringCounters(() => Date.now()),
    log: () => {},
  };
  const keyAuthConfig = declared('key-auth');
  // The bench's consumer has a plan plugin of its own: that instance runs, not the global one.
  const rateLimitingConfig = declared('rate-limiting', { minute: 1e9, day: 1e10 });
  const sizeConfig = declared('request-size-limiting');

  const newContext = (n: number) => {
    const ctx = new RequestContext({
      id: String(n), startedAt: Date.now(), method: 'GET', scheme: 'http', host: '127.0.0.1', port: 8000, path: '/v1/pets', query: 'limit=20',
      headers: headerMapFrom({ host: '127.0.0.1:8000', authorization: `Bearer ${KEY}`, 'user-agent': 'autocannon' }),
      clientIp: '127.0.0.1',
    });
    return ctx;
  };
  const upstreamResponse = (ctx: RequestContext) => {
    ctx.markProxied();
    copyUpstreamHeaders(ctx, UPSTREAM_HEADERS);
  };

  const pieces: Array<{ name: string; before: (ctx: RequestContext) => void; after: (ctx: RequestContext) => void }> = [
    {
      name: 'animal-store-edge (Lua, 3 phases)',
      before: (ctx) => {
        host.planFinalCall(ctx, EDGE, 'body_filter');
        void edge.access!(ctx, edgeConfig, env);
        ctx.authenticate(consumer, credential);
      },
      after: (ctx) => {
        void edge.header_filter!(ctx, edgeConfig, env);
        const body = Buffer.alloc(0);
        ctx.beginBodyChunk(body, true);
        void edge.body_filter!(ctx, edgeConfig, env, body);
        ctx.endBodyChunk();
      },
    },
    { name: 'request-size-limiting', before: (ctx) => void requestSizeLimiting.access!(ctx, sizeConfig, env), after: () => {} },
    {
      name: 'key-auth',
      before: (ctx) => {
        // Where animal-store-edge puts the bearer token.
        ctx.requestHeaders.set('apikey', KEY);
        void keyAuth.access!(ctx, keyAuthConfig, env);
      },
      after: () => {},
    },
    {
      name: 'rate-limiting (the plan instance)',
      before: (ctx) => {
        ctx.authenticate(consumer, credential);
        void rateLimiting.access!(ctx, rateLimitingConfig, env);
      },
      after: () => {},
    },
    { name: "Kong's own response headers", before: () => {}, after: (ctx) => addKongHeaders(ctx) },
  ];

  const oneRequest = (n: number, piece?: (typeof pieces)[number]) => {
    const ctx = newContext(n);
    piece?.before(ctx);
    upstreamResponse(ctx);
    piece?.after(ctx);
  };

  const measure = (seconds: number, piece?: (typeof pieces)[number]) => leastCpuMicrosPerRequest(seconds, (n) => oneRequest(n, piece));

  const round = (micros: number) => Math.round(micros * 10) / 10;
  progress(`the plugin chain's pieces, in process (${options.vm}): ${options.seconds}s each`);
  const bookkeeping = measure(Math.min(1, options.seconds));
  const costs = pieces.map((piece) => ({ name: piece.name, micros: round(measure(options.seconds, piece) - bookkeeping) }));
  for (const { name, micros } of costs) progress(`  ${name}: ${micros} µs CPU/request`);
  return { pieces: costs, bookkeepingMicros: round(bookkeeping) };
}
