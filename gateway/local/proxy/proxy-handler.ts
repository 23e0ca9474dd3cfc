import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { KongHeaders, headerMapFrom } from '../kong/headers.ts';
import { SERVER_TOKENS } from '../kong/version.ts';
import { DOWNSTREAM_PHASES, type PluginConfig, type PluginDefinition } from '../plugins/plugin.ts';
import { PluginSet } from '../plugins/plugin-set.ts';
import type { GatewayRuntime } from '../runtime/gateway-runtime.ts';
import { ExitSignal, RequestContext, type ExitResponse } from './request-context.ts';
import { escapeUri, normalizePath, upstreamPath } from './uri.ts';
import { UpstreamError, sendWithRetries, type UpstreamPool, type UpstreamResponse } from './upstream.ts';

type Step = readonly [PluginDefinition, PluginConfig];
type Collected = Record<(typeof DOWNSTREAM_PHASES)[number], Step[]>;

/** Request headers Kong sets itself or that only concern one hop (nginx proxy_set_header). */
const NOT_FORWARDED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length',
  'via', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-path',
  'x-forwarded-prefix', 'x-real-ip', 'x-kong-request-id',
]);
const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade', 'proxy-connection']);

const newRequestId = () => randomUUID().replaceAll('-', '');

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * Kong's proxy request lifecycle (kong/init.lua, kong/runloop/handler.lua, 3.9.1): rewrite
 * (global plugins), router, access (collecting plugins by precedence; an exit is delayed until
 * every plugin has been collected), the upstream call, header_filter, body_filter, log.
 */
export class ProxyHandler {
  constructor(
    private readonly runtime: GatewayRuntime,
    private readonly upstreams: UpstreamPool,
    private readonly listenPort: number,
  ) {}

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.process(req, res).catch((error: unknown) => {
      this.runtime.log('err', `proxy: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) {
        res.statusCode = 500;
        res.end();
      } else {
        res.destroy();
      }
    });
  };

  private async process(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { runtime } = this;
    const env = runtime.env;
    const started = performance.now();
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const ctx = new RequestContext(
      newRequestId(),
      env.now(),
      req.method ?? 'GET',
      'http',
      (req.headers.host ?? '').replace(/:\d+$/, ''),
      this.listenPort,
      path,
      q === -1 ? '' : target.slice(q + 1),
      headerMapFrom(req.headers),
      req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '',
    );
    const plugins = runtime.plugins;
    let exit: ExitResponse | undefined;
    let collected: Collected | undefined;

    // rewrite: global plugins only, before routing
    for (const entry of plugins.entries) {
      if (!entry.global || !entry.definition.rewrite || exit) continue;
      exit = await this.runAccessLike(entry.definition, 'rewrite', ctx, entry.global);
    }

    const normalized = normalizePath(path);
    const match = exit ? undefined : runtime.router.match({ method: ctx.method, path: normalized, host: req.headers.host ?? '', headers: ctx.requestHeaders });
    if (!exit && !match) {
      exit = ctx.errorResponse(404, 'no Route matched with those values');
      ctx.exited = true;
    }
    if (match) {
      const { route, service } = match;
      ctx.route = route;
      ctx.service = service;
      ctx.strippedPrefix = route.strip_path ? match.matchedPath : undefined;
      ctx.upstreamPath = upstreamPath(normalized, ctx.strippedPrefix, route.strip_path, service.path);
      collected = { header_filter: [], body_filter: [], log: [] };
      for (const planned of plugins.planFor(route.id, service.id)) {
        // The consumer an auth plugin identified changes which instances the next plugins use.
        const config = PluginSet.configFor(planned, ctx.consumer?.id);
        if (!config) continue;
        const { definition } = planned.entry;
        if (definition.header_filter) collected.header_filter.push([definition, config]);
        if (definition.body_filter) collected.body_filter.push([definition, config]);
        if (definition.log) collected.log.push([definition, config]);
        if (definition.access && !exit) exit = await this.runAccessLike(definition, 'access', ctx, config);
      }
      if (!exit && !route.protocols.includes('http')) {
        exit = ctx.errorResponse(426, 'Please use HTTPS protocol', { Connection: 'Upgrade', Upgrade: 'TLS/1.2, HTTP/1.1' });
        ctx.exited = true;
      }
    }
    const downstream = collected ?? this.globalSteps();
    markFinalLuaCall(ctx, downstream);

    if (exit) {
      await this.respond(res, ctx, downstream, started, this.exitBody(ctx, exit), undefined);
      return;
    }

    // upstream
    const service = ctx.service!;
    const body = await readBody(req);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of ctx.requestHeaders) if (!NOT_FORWARDED.has(name)) headers[name] = value;
    const route = ctx.route!;
    const defaultPort = service.protocol === 'https' ? 443 : 80;
    // kong/runloop/handler.lua (3.9.1) access.after: a non-empty $upstream_host (set by a plugin, or by
    // the router under preserve_host) is sent as is; otherwise the service's host[:port].
    headers.host =
      ctx.upstreamHost ?? (route.preserve_host && req.headers.host ? req.headers.host : service.port === defaultPort ? service.host : `${service.host}:${service.port}`);
    const clientXff = ctx.requestHeaders.get('x-forwarded-for');
    headers['x-forwarded-for'] = clientXff ? `${Array.isArray(clientXff) ? clientXff.join(', ') : clientXff}, ${ctx.clientIp}` : ctx.clientIp;
    headers['x-forwarded-proto'] = ctx.scheme;
    headers['x-forwarded-host'] = ctx.host;
    headers['x-forwarded-port'] = String(ctx.port);
    headers['x-forwarded-path'] = path;
    if (ctx.strippedPrefix !== undefined && ctx.strippedPrefix !== '/') headers['x-forwarded-prefix'] = ctx.strippedPrefix;
    headers['x-real-ip'] = ctx.clientIp;
    headers['x-kong-request-id'] = ctx.id;
    const clientVia = req.headers.via;
    headers.via = clientVia ? `${clientVia}, 1.1 ${SERVER_TOKENS}` : `1.1 ${SERVER_TOKENS}`;
    if (body) headers['content-length'] = String(body.length);

    const upstreamStarted = performance.now();
    let upstream: UpstreamResponse;
    try {
      upstream = await sendWithRetries(this.upstreams, {
        service,
        method: ctx.method,
        path: escapeUri(ctx.upstreamPath) + (ctx.upstreamQuery ? `?${ctx.upstreamQuery}` : ''),
        headers,
        body,
      });
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      this.runtime.log('err', `upstream: ${error.message} while proxying ${ctx.method} ${path}`);
      // kong/error_handlers.lua: the body format follows Accept, else Content-Type, of the request.
      const response = ctx.errorResponse(error.status, error.clientMessage, {}, ctx.getHeader('accept') ?? ctx.getHeader('content-type'));
      ctx.exited = true;
      await this.respond(res, ctx, downstream, started, this.exitBody(ctx, response), undefined);
      return;
    }

    ctx.proxied = true;
    ctx.status = upstream.status;
    let upstreamVia: string | undefined;
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (value === undefined || HOP_BY_HOP_RESPONSE.has(name)) continue;
      if (name === 'via') {
        upstreamVia = Array.isArray(value) ? value.join(', ') : value;
        continue;
      }
      ctx.setResponseHeader(name, value);
    }
    const upstreamLatency = Math.round(performance.now() - upstreamStarted);
    await this.respond(res, ctx, downstream, started, undefined, upstream, { upstreamLatency, upstreamVia });
  }

  /** Global plugins with downstream phases: what runs when no route matched (get_global_iterator). */
  private globalSteps(): Collected {
    const steps: Collected = { header_filter: [], body_filter: [], log: [] };
    for (const entry of this.runtime.plugins.entries) {
      if (!entry.global) continue;
      for (const phase of DOWNSTREAM_PHASES) if (entry.definition[phase]) steps[phase].push([entry.definition, entry.global]);
    }
    return steps;
  }

  private async runAccessLike(definition: PluginDefinition, phase: 'access' | 'rewrite', ctx: RequestContext, config: PluginConfig): Promise<ExitResponse | undefined> {
    try {
      const pending = definition[phase]!(ctx, config, this.runtime.env);
      if (pending) await pending;
      return undefined;
    } catch (error) {
      if (error instanceof ExitSignal) return error.response;
      // kong/init.lua: a failing handler becomes a 500 and the response source "error".
      this.runtime.log('err', `${definition.name} (${phase}): ${(error as Error).message}`);
      ctx.unexpected = true;
      return ctx.errorResponse(500, 'An unexpected error occurred');
    }
  }

  /** kong.response.exit's send(): a table body becomes JSON with its Content-Type and length. */
  private exitBody(ctx: RequestContext, exit: ExitResponse): Buffer {
    ctx.status = exit.status;
    let hasContentType = false;
    for (const [name, value] of Object.entries(exit.headers ?? {})) {
      if (name.toLowerCase() === 'content-type') hasContentType = true;
      ctx.setResponseHeader(name, value);
    }
    if (exit.body === undefined) return Buffer.alloc(0);
    if (typeof exit.body === 'string') return Buffer.from(exit.body);
    if (!hasContentType) ctx.setResponseHeader('Content-Type', 'application/json; charset=utf-8');
    return Buffer.from(JSON.stringify(exit.body));
  }

  private async respond(
    res: ServerResponse,
    ctx: RequestContext,
    steps: Collected,
    started: number,
    generatedBody: Buffer | undefined,
    upstream: UpstreamResponse | undefined,
    timing?: { upstreamLatency: number; upstreamVia: string | undefined },
  ): Promise<void> {
    const { env } = this.runtime;
    let body = generatedBody;
    let headerFilterExited = false;
    for (const [definition, config] of steps.header_filter) {
      try {
        void definition.header_filter!(ctx, config, env);
      } catch (error) {
        if (error instanceof ExitSignal) {
          // kong.response.exit in header_filter: ngx.exit(ngx.OK) ends the whole header filter.
          upstream?.body.resume();
          upstream = undefined;
          body = this.exitBody(ctx, error.response);
          headerFilterExited = true;
          break;
        }
        this.abort(res, ctx, steps, upstream, definition.name, 'header_filter', error as Error);
        return;
      }
    }
    if (!headerFilterExited) {
      if (ctx.proxied && !ctx.exited) {
        ctx.setResponseHeader(KongHeaders.upstreamLatency, String(timing!.upstreamLatency));
        ctx.setResponseHeader(KongHeaders.proxyLatency, String(Math.max(0, Math.round(performance.now() - started) - timing!.upstreamLatency)));
        ctx.setResponseHeader(KongHeaders.via, timing!.upstreamVia ? `${timing!.upstreamVia}, 1.1 ${SERVER_TOKENS}` : `1.1 ${SERVER_TOKENS}`);
        if (!ctx.responseHeaders.has('server')) ctx.setResponseHeader(KongHeaders.server, SERVER_TOKENS);
      } else {
        ctx.setResponseHeader(KongHeaders.responseLatency, String(Math.round(performance.now() - started)));
        if (ctx.getResponseHeader('via') !== SERVER_TOKENS) ctx.setResponseHeader(KongHeaders.server, SERVER_TOKENS);
      }
      ctx.setResponseHeader(KongHeaders.requestId, ctx.id);
    }

    const isHead = ctx.method === 'HEAD';
    if (steps.body_filter.length > 0 || !upstream) {
      if (upstream) body = await readAll(upstream.body);
      for (const [definition, config] of steps.body_filter) {
        try {
          const pending = definition.body_filter!(ctx, config, env, ctx.replacementBody !== undefined ? Buffer.from(ctx.replacementBody) : body ?? Buffer.alloc(0));
          if (pending) await pending;
        } catch (error) {
          this.abort(res, ctx, steps, undefined, definition.name, 'body_filter', error as Error);
          return;
        }
      }
      if (ctx.replacementBody !== undefined) body = Buffer.from(ctx.replacementBody);
      ctx.responseHeaders.delete('content-length');
      if (!isHead) ctx.setResponseHeader('Content-Length', String(body?.length ?? 0));
      this.writeHead(res, ctx);
      res.end(isHead ? undefined : body);
    } else {
      this.writeHead(res, ctx);
      upstream.body.pipe(res);
    }

    res.once('finish', () => this.log(ctx, steps));
    res.once('close', () => {
      if (!res.writableFinished) this.log(ctx, steps);
    });
  }

  /**
   * kong/init.lua runs header_filter and body_filter handlers without pcall: an error ends the
   * phase, nginx logs "failed to run header_filter_by_lua*" and aborts the request, closing the
   * connection with no response (openresty/lua-nginx-module#2314); the log phase still runs.
   * (On Kong a body_filter error comes after the headers went out; here the body is buffered, so
   * the client gets nothing either way.)
   */
  private abort(
    res: ServerResponse,
    ctx: RequestContext,
    steps: Collected,
    upstream: UpstreamResponse | undefined,
    plugin: string,
    phase: 'header_filter' | 'body_filter',
    error: Error,
  ): void {
    this.runtime.log('err', `${plugin} (${phase}): failed to run ${phase}_by_lua*: ${error.message}; request aborted`);
    upstream?.body.resume();
    res.destroy();
    this.log(ctx, steps);
  }

  /** One writeHead with a flat [name, value, ...] list: cheaper than a setHeader per header. */
  private writeHead(res: ServerResponse, ctx: RequestContext): void {
    const flat: string[] = [];
    for (const [lower, value] of ctx.responseHeaders) {
      const name = ctx.responseHeaderNames.get(lower) ?? lower;
      if (Array.isArray(value)) for (const v of value) flat.push(name, v);
      else flat.push(name, value);
    }
    res.writeHead(ctx.status, flat);
  }

  private log(ctx: RequestContext, steps: Collected): void {
    for (const [definition, config] of steps.log) {
      try {
        const pending = definition.log!(ctx, config, this.runtime.env);
        if (pending) pending.catch((error: Error) => this.runtime.log('err', `${definition.name} (log): ${error.message}`));
      } catch (error) {
        this.runtime.log('err', `${definition.name} (log): ${(error as Error).message}`);
      }
    }
    this.runtime.lua.release(ctx);
  }
}

/** The last Lua phase of the request releases the VM's per-request state in the same call. */
function markFinalLuaCall(ctx: RequestContext, steps: Collected): void {
  for (const phase of ['log', 'body_filter', 'header_filter'] as const) {
    const list = steps[phase];
    for (let i = list.length - 1; i >= 0; i--) {
      const definition = list[i]![0];
      if (definition.lua) {
        ctx.finalLuaCall = { plugin: definition.name, phase };
        return;
      }
    }
  }
}
