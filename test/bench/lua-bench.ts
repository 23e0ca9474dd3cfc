import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { LuaPluginHost } from '../../gateway/local/lua/lua-plugin-host.ts';
import type { LuaVmKind } from '../../gateway/local/lua/vm/lua-vm.ts';
import type { PluginConfig, PluginEnvironment } from '../../gateway/local/plugins/plugin.ts';
import { RequestContext } from '../../gateway/local/proxy/request-context.ts';
import type { Consumer } from '../../gateway/local/control-plane/db/entities.ts';
import { progress } from './load.ts';
import { leastCpuMicrosPerRequest } from './least-cpu.ts';

const PLUGIN = 'animal-store-edge';
const NOOP = 'bench-noop';

/**
 * What the Lua plugin costs per request on the benchmark's path: animal-store-edge's access,
 * header_filter and body_filter for an authenticated 200, through the same calls the proxy makes
 * (the plugin's definition, a real RequestContext: bridge and VM together), without HTTP. The
 * same requests without the plugin's calls (the context and the response headers the proxy
 * builds anyway) are measured too and subtracted: what remains is the plugin's own cost.
 */
export async function benchLuaPhases(
  options: { seconds: number; vm: LuaVmKind },
): Promise<{ microsPerRequest: number; bookkeepingMicros: number; noopMicros: number }> {
  const host = await LuaPluginHost.create({ sharedDicts: ['animal_store_edge'], nodeId: 'bench', vm: { kind: options.vm } });
  const edge = host.loadPlugin('gateway/plugins', PLUGIN);
  // The same three phase calls into a plugin that does nothing: the bridge's fixed cost.
  const noop = host.loadPlugin('test/bench/plugins', NOOP);
  const declared = (parse(readFileSync('gateway/kong.yml', 'utf8')) as { plugins: Array<{ name: string; config: object }> }).plugins.find(
    (plugin) => plugin.name === PLUGIN,
  )!;
  const config: PluginConfig = { ...declared.config, __plugin_id: 'bench', __route_id: null, __service_id: null, __consumer_id: null };
  host.setConfig(PLUGIN, config);
  const noopConfig: PluginConfig = { __plugin_id: 'bench-noop', __route_id: null, __service_id: null, __consumer_id: null };
  host.setConfig(NOOP, noopConfig);
  const env: PluginEnvironment = {
    now: () => Date.now(),
    findConsumer: () => undefined,
    findCredential: () => undefined,
    counters: { get: () => 0, increment: () => 1 },
    log: () => {},
  };
  const consumer: Consumer = { id: 'c0ffee00-0000-4000-8000-000000000001', username: 'bench', custom_id: null, tags: null, created_at: 0, updated_at: 0 };
  const credential = { id: 'c0ffee00-0000-4000-8000-000000000002', consumer: { id: consumer.id } };
  const body = Buffer.from(JSON.stringify({ data: Array.from({ length: 20 }, (_, id) => ({ id, name: `pet ${id}`, status: 'available' })) }));

  /** One request; without a plugin, only what the proxy does anyway (its context, the response headers). */
  const oneRequest = (n: number, plugin?: 'edge' | 'noop') => {
    const ctx = new RequestContext({
      id: String(n), startedAt: Date.now(), method: 'GET', scheme: 'http', host: '127.0.0.1', port: 8000, path: '/v1/pets', query: 'limit=20',
      headers: new Map([
        ['host', '127.0.0.1:8000'],
        ['authorization', 'Bearer ask_k2JbQm1yQ0Yy9Q3bWv8cX2ZLr5pN7tHf4sDg6aE0uIo'],
        ['user-agent', 'autocannon'],
      ]),
      clientIp: '127.0.0.1',
    });
    const [definition, conf, pluginName] = plugin === 'noop' ? [noop, noopConfig, NOOP] : [edge, config, PLUGIN];
    if (plugin) {
      host.planFinalCall(ctx, pluginName, 'body_filter');
      void definition.access!(ctx, conf, env);
    }
    ctx.authenticate(consumer, credential);
    ctx.markProxied();
    for (const [name, value] of [
      ['Content-Type', 'application/json; charset=utf-8'], ['Content-Length', String(body.length)],
      ['X-RateLimit-Limit-Minute', '1000000000'], ['X-RateLimit-Remaining-Minute', '999999999'],
      ['RateLimit-Limit', '1000000000'], ['RateLimit-Remaining', '999999999'], ['RateLimit-Reset', '31'],
    ] as const) ctx.setResponseHeader(name, value);
    if (!plugin) return;
    void definition.header_filter!(ctx, conf, env);
    ctx.beginBodyChunk(body, true);
    void definition.body_filter!(ctx, conf, env, body);
    ctx.endBodyChunk();
  };

  const measure = (seconds: number, plugin?: 'edge' | 'noop') => leastCpuMicrosPerRequest(seconds, (n) => oneRequest(n, plugin));

  progress(`Lua plugin alone (${PLUGIN}, 3 phases, in process, ${options.vm}): ${options.seconds}s`);
  const bookkeeping = measure(Math.min(1, options.seconds));
  const total = measure(options.seconds, 'edge');
  const noopTotal = measure(Math.min(1, options.seconds), 'noop');
  const round = (micros: number) => Math.round(micros * 10) / 10;
  const microsPerRequest = round(total - bookkeeping);
  const noopMicros = round(noopTotal - bookkeeping);
  progress(`Lua plugin alone (${options.vm}): ${microsPerRequest} µs CPU/request (${round(total)} with the request's own bookkeeping; ${noopMicros} for a plugin doing nothing)`);
  return { microsPerRequest, bookkeepingMicros: round(bookkeeping), noopMicros };
}
