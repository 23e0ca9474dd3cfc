import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { defaultErrorMessage } from '../kong/error-template.ts';
import { KongHeaders, headerMapFrom } from '../kong/headers.ts';
import { KONG_ERROR_PAGES, nginxSpecialPage } from '../kong/nginx-defaults.ts';
import { SERVER_TOKENS } from '../kong/version.ts';
import { DOWNSTREAM_PHASES } from '../plugins/plugin.ts';
import { PluginSet } from '../plugins/plugin-set.ts';
import type { GatewayRuntime } from '../runtime/gateway-runtime.ts';
import { ClientBody } from './client-body.ts';
import { ConnectionGuard, newRequestId, sendEarlyResponse } from './client-errors.ts';
import { FilterAbort, PhaseRunner, type Step } from './phase-runner.ts';
import { RequestContext, type ExitResponse } from './request-context.ts';
import { readRequestHead } from './request-head.ts';
import { UpstreamError, sendWithRetries, type UpstreamPool, type UpstreamResponse } from './upstream.ts';
import { upstreamHeaders, upstreamTarget } from './upstream-request.ts';
import { normalizePath, upstreamPath } from './uri.ts';

/** The plugins whose downstream handlers run for this request, in order (ctx.plugins in Kong). */
type Downstream = Record<(typeof DOWNSTREAM_PHASES)[number], Step[]>;

const EMPTY = Buffer.alloc(0);

/** The upstream's response body failed half way: nothing more can be sent. */
class UpstreamReadError extends Error {
  constructor(cause: Error) {
    super(`upstream: ${cause.message} while reading the response`);
  }
}

const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade', 'proxy-connection']);

/** How the request's response is produced: by Kong (an exit) or by the upstream. */
type Outcome = { exit: ExitResponse; phase: 'rewrite' | 'access' | 'balancer' } | { upstream: UpstreamResponse };

/**
 * One proxied request, phase by phase, as kong/init.lua (3.9.3) runs it: Kong.rewrite (global
 * plugins), the router, Kong.access (plugins collected by precedence, an exit delayed until
 * the iterator is done), Kong.balancer (the upstream call and its retries), Kong.header_filter,
 * Kong.body_filter (per chunk), Kong.log. Plugin handlers only ever run through PhaseRunner.
 */
export class ProxyLifecycle {
  private readonly phases: PhaseRunner;

  constructor(
    private readonly runtime: GatewayRuntime,
    private readonly upstreams: UpstreamPool,
    private readonly listenPort: number,
    private readonly connections: ConnectionGuard,
  ) {
    this.phases = new PhaseRunner(runtime.env);
  }

  /** The http.Server 'request' (and 'checkContinue', 'checkExpectation') listener. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.run(req, res).catch((error: unknown) => {
      this.runtime.log('err', `proxy: ${(error as Error)?.stack ?? String(error)}`);
      if (!res.headersSent) sendEarlyResponse(res, 500, undefined);
      else res.destroy();
    });
  };

  private async run(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const expectsContinue = /^\s*100-continue\s*$/i.test(req.headers.expect ?? '') && req.httpVersion === '1.1';
    const body = new ClientBody(req, res, expectsContinue);
    this.connections.track(req, res, body);
    res.on('error', () => undefined);
    const head = readRequestHead(req);
    if ('status' in head) {
      this.runtime.log('info', `${head.reason}: ${head.status}`);
      sendEarlyResponse(res, head.status, req.headers.accept ?? req.headers['content-type']);
      return;
    }
    const ctx = new RequestContext({
      id: newRequestId(),
      startedAt: this.runtime.env.now(),
      method: req.method ?? 'GET',
      scheme: 'http',
      host: head.host,
      port: this.listenPort,
      path: head.path,
      query: head.query,
      headers: headerMapFrom(req.headers),
      clientIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '',
      body,
    });

    const downstream = this.globalDownstream();
    let outcome = await this.rewrite(ctx);
    let plugins = downstream;
    if (!outcome) {
      const routed = this.route(ctx);
      if (routed) outcome = { exit: routed, phase: 'access' };
      else {
        plugins = { header_filter: [], body_filter: [], log: [] };
        outcome = await this.access(ctx, plugins);
      }
    }
    outcome ??= await this.balancer(ctx, body, head.hostHeader, res);
    this.planFinalLuaCall(ctx, plugins);
    await this.respond(req, res, ctx, body, plugins, outcome);
  }

  /** Kong.rewrite: global plugins only, before the router; an exit answers at once. */
  private async rewrite(ctx: RequestContext): Promise<Outcome | undefined> {
    for (const entry of this.runtime.plugins.entries) {
      if (!entry.global || !entry.definition.rewrite) continue;
      const exit = await this.phases.rewriteOrAccess([entry.definition, entry.global], 'rewrite', ctx);
      if (exit) return { exit, phase: 'rewrite' };
    }
    return undefined;
  }

  /** The router (kong/runloop/handler.lua access.before): no match is Kong's 404. */
  private route(ctx: RequestContext): ExitResponse | undefined {
    const normalized = normalizePath(ctx.path);
    // $host: an absolute-form target's host, else the Host header's (without port).
    const match = this.runtime.router.match({ method: ctx.method, path: normalized, host: ctx.host, headers: ctx.requestHeaders });
    if (!match) {
      ctx.markExited();
      return ctx.errorResponse(404, 'no Route matched with those values');
    }
    const { route, service } = match;
    ctx.route = route;
    ctx.service = service;
    ctx.strippedPrefix = route.strip_path ? match.matchedPath : undefined;
    ctx.upstreamPath = upstreamPath(normalized, ctx.strippedPrefix, route.strip_path, service.path);
    return undefined;
  }

  /**
   * Kong.access: each plugin is looked up for the route, service and the consumer known so far
   * (an auth plugin changes which instances the next ones use) and its downstream handlers
   * collected; after an exit the remaining plugins are still collected but not run.
   */
  private async access(ctx: RequestContext, downstream: Downstream): Promise<Outcome | undefined> {
    let exit: ExitResponse | undefined;
    for (const planned of this.runtime.plugins.planFor(ctx.route!.id, ctx.service!.id)) {
      const config = PluginSet.configFor(planned, ctx.consumer?.id);
      if (!config) continue;
      const { definition } = planned.entry;
      for (const phase of DOWNSTREAM_PHASES) if (definition[phase]) downstream[phase].push([definition, config]);
      if (definition.access && !exit) exit = await this.phases.rewriteOrAccess([definition, config], 'access', ctx);
    }
    if (!exit && !ctx.route!.protocols.includes('http')) {
      ctx.markExited();
      exit = ctx.errorResponse(426, 'Please use HTTPS protocol', { Connection: 'Upgrade', Upgrade: 'TLS/1.2, HTTP/1.1' });
    }
    return exit ? { exit, phase: 'access' } : undefined;
  }

  /**
   * Kong.balancer and the proxy: the upstream call with the service's retries. A failure is
   * answered as nginx does (error_page → Kong.handle_error, which sets KONG_UNEXPECTED: the
   * response's source is "error"), the body format following Accept, else Content-Type.
   */
  private async balancer(ctx: RequestContext, body: ClientBody, hostHeader: string | undefined, res: ServerResponse): Promise<Outcome> {
    const requestBody = body.forUpstream();
    // proxy_ignore_client_abort off: a client that goes away ends the upstream request too.
    const clientGone = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) clientGone.abort();
    };
    res.once('close', onClose);
    const length = requestBody instanceof Buffer ? requestBody.length : body.chunked ? undefined : body.declaredLength;
    ctx.timing.upstreamStart = performance.now();
    try {
      const upstream = await sendWithRetries(this.upstreams, {
        service: ctx.service!,
        method: ctx.method,
        path: upstreamTarget(ctx),
        headers: upstreamHeaders(ctx, hostHeader, length),
        body: requestBody,
        signal: clientGone.signal,
      });
      ctx.timing.upstreamResponse = performance.now();
      return { upstream };
    } catch (error) {
      ctx.markUnexpected();
      if (clientGone.signal.aborted || res.destroyed) {
        // nginx logs 499: nobody is left to answer.
        this.runtime.log('info', `client closed the connection while ${ctx.method} ${ctx.path} was proxied (499)`);
        return { exit: { status: 499, body: '' }, phase: 'balancer' };
      }
      const accept = ctx.getHeader('accept') ?? ctx.getHeader('content-type');
      if (body.failed) return { exit: ctx.errorResponse(400, undefined, {}, accept), phase: 'balancer' };
      if (!(error instanceof UpstreamError)) throw error;
      this.runtime.log('err', `upstream: ${error.message} while proxying ${ctx.method} ${ctx.path}`);
      return { exit: ctx.errorResponse(error.status, error.clientMessage, {}, accept), phase: 'balancer' };
    } finally {
      res.off('close', onClose);
    }
  }

  /** Global plugins' downstream handlers: what runs when no route matched (get_global_iterator). */
  private globalDownstream(): Downstream {
    const steps: Downstream = { header_filter: [], body_filter: [], log: [] };
    for (const entry of this.runtime.plugins.entries) {
      if (!entry.global) continue;
      for (const phase of DOWNSTREAM_PHASES) if (entry.definition[phase]) steps[phase].push([entry.definition, entry.global]);
    }
    return steps;
  }

  /**
   * The response, through header_filter and body_filter, then the log phase once it is sent or
   * the client is gone. The client's unread body is drained afterwards (nginx discards it), or the
   * connection closes when the client still waits for `100 Continue`.
   */
  private async respond(req: IncomingMessage, res: ServerResponse, ctx: RequestContext, body: ClientBody, plugins: Downstream, outcome: Outcome): Promise<void> {
    let logged = false;
    const log = () => {
      if (logged) return;
      logged = true;
      this.phases.log(plugins.log, ctx);
      this.runtime.lua.release(ctx);
      if (!req.complete && !body.clientWaitsForContinue) discardBody(req);
    };
    res.once('finish', log);
    res.once('close', () => {
      if (!res.writableFinished) this.runtime.log('info', `client closed the connection before the response to ${ctx.method} ${ctx.path} was sent`);
      log();
    });
    // A client still waiting for `100 Continue` may or may not send its body: the connection cannot
    // be reused. Otherwise an unread body is discarded after the response, as nginx does
    // (ngx_http_discard_request_body), for at most LINGERING_TIME.
    if (body.clientWaitsForContinue || body.failed) res.shouldKeepAlive = false;
    if (res.destroyed) {
      if ('upstream' in outcome) outcome.upstream.body.resume();
      log();
      return;
    }

    let upstream: UpstreamResponse | undefined;
    let generated: Buffer | undefined;
    if ('exit' in outcome) generated = this.applyExit(ctx, outcome.exit, false);
    else {
      upstream = outcome.upstream;
      this.applyUpstreamHeaders(ctx, upstream);
    }

    try {
      const exit = this.phases.headerFilter(plugins.header_filter, ctx);
      if (exit) {
        // kong.response.exit in header_filter: ngx.exit(ngx.OK) ends the phase; its body replaces the response.
        upstream?.body.resume();
        upstream = undefined;
        generated = this.applyExit(ctx, exit, true);
      } else this.addKongHeaders(ctx);

      const isHead = ctx.method === 'HEAD';
      if (!upstream) {
        const filtered = await this.phases.bodyFilter(plugins.body_filter, ctx, generated ?? Buffer.alloc(0), true);
        ctx.clearResponseHeader('content-length');
        if (!isHead) ctx.setResponseHeader('Content-Length', String(filtered.chunk.length));
        this.writeHead(res, ctx);
        res.end(isHead ? undefined : filtered.chunk);
        return;
      }
      this.writeHead(res, ctx);
      if (plugins.body_filter.length === 0) {
        const source = upstream.body;
        source.once('error', (error: Error) => {
          this.runtime.log('err', new UpstreamReadError(error).message);
          res.destroy();
        });
        source.pipe(res);
        return;
      }
      await this.streamFiltered(res, ctx, plugins.body_filter, upstream.body);
    } catch (error) {
      if (!(error instanceof FilterAbort || error instanceof UpstreamReadError)) throw error;
      this.runtime.log('err', error.message);
      upstream?.body.resume();
      res.destroy();
      log();
    }
  }

  /**
   * body_filter per chunk as it arrives, as nginx calls it, the last call with eof. A chunk waits
   * one turn of the event loop for the end of the body, so a body that arrives in one piece is one
   * call with eof set (no extra empty call). At most a few chunks are queued (backpressure).
   */
  private async streamFiltered(res: ServerResponse, ctx: RequestContext, steps: Step[], source: NodeJS.ReadableStream): Promise<void> {
    const queue: Buffer[] = [];
    let ended = false;
    let failed: Error | undefined;
    let wake: (() => void) | undefined;
    const onData = (chunk: Buffer) => {
      queue.push(chunk);
      if (queue.length >= 4) source.pause();
      wake?.();
    };
    source.on('data', onData);
    source.once('end', () => {
      ended = true;
      wake?.();
    });
    source.once('error', (error: Error) => {
      failed = error;
      wake?.();
    });
    for (;;) {
      if (queue.length === 0 && !ended && !failed) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      if (failed) throw new UpstreamReadError(failed);
      if (!ended) await new Promise((resolve) => setImmediate(resolve));
      const chunk = queue.length <= 1 ? (queue.shift() ?? EMPTY) : Buffer.concat(queue.splice(0));
      const eof = ended && queue.length === 0;
      if (source.isPaused()) source.resume();
      const filtered = await this.phases.bodyFilter(steps, ctx, chunk, eof);
      if (res.destroyed) {
        source.off('data', onData);
        source.resume();
        return;
      }
      if (filtered.chunk.length > 0 && !res.write(filtered.chunk)) await waitForDrain(res);
      if (filtered.eof) {
        // set_raw_body ended the body: what else the upstream sends is dropped.
        source.off('data', onData);
        source.resume();
        res.end();
        return;
      }
    }
  }

  /**
   * kong.response.exit's send() (kong/pdk/response.lua, 3.9.3). A table body becomes JSON with its
   * Content-Type; a string is sent as is. Without a body, send() prints nothing and calls
   * ngx.exit(status) (outside header_filter): nginx then finalizes the request with that status,
   * so the statuses nginx_kong.lua gives an error_page get Kong.handle_error's template (and
   * KONG_UNEXPECTED, source "error"), other statuses from 300 nginx's own page, the rest nothing.
   */
  private applyExit(ctx: RequestContext, exit: ExitResponse, inHeaderFilter: boolean): Buffer {
    ctx.status = exit.status;
    let hasContentType = false;
    for (const [name, value] of Object.entries(exit.headers ?? {})) {
      if (name.toLowerCase() === 'content-type') hasContentType = true;
      ctx.setResponseHeader(name, value);
    }
    if (exit.body === undefined) {
      if (inHeaderFilter || exit.status < 300) return Buffer.alloc(0);
      if (KONG_ERROR_PAGES.has(exit.status)) {
        ctx.markUnexpected();
        const page = ctx.errorResponse(exit.status, defaultErrorMessage(exit.status), {}, ctx.getHeader('accept') ?? ctx.getHeader('content-type'));
        ctx.status = exit.status === 494 ? 400 : exit.status;
        ctx.setResponseHeader('Content-Type', page.headers!['Content-Type']!);
        return Buffer.from(page.body as string);
      }
      const page = nginxSpecialPage(exit.status);
      if (page === undefined) return Buffer.alloc(0);
      ctx.setResponseHeader('Content-Type', 'text/html');
      return Buffer.from(page);
    }
    if (typeof exit.body === 'string') return Buffer.from(exit.body);
    if (!hasContentType) ctx.setResponseHeader('Content-Type', 'application/json; charset=utf-8');
    return Buffer.from(JSON.stringify(exit.body));
  }

  private applyUpstreamHeaders(ctx: RequestContext, upstream: UpstreamResponse): void {
    ctx.markProxied();
    ctx.status = upstream.status;
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (value === undefined || HOP_BY_HOP_RESPONSE.has(name)) continue;
      ctx.setResponseHeader(name, value);
    }
  }

  /** kong/runloop/handler.lua header_filter.after: latency headers, Via, Server, the request id. */
  private addKongHeaders(ctx: RequestContext): void {
    const now = performance.now();
    const { timing } = ctx;
    if (ctx.source === 'service' && timing.upstreamResponse !== undefined) {
      const upstreamLatency = Math.round(timing.upstreamResponse - timing.upstreamStart!);
      ctx.setResponseHeader(KongHeaders.upstreamLatency, String(upstreamLatency));
      ctx.setResponseHeader(KongHeaders.proxyLatency, String(Math.max(0, Math.round(now - timing.start) - upstreamLatency)));
      const upstreamVia = ctx.responseHeaders.get('via');
      const via = Array.isArray(upstreamVia) ? upstreamVia.join(', ') : upstreamVia;
      ctx.setResponseHeader(KongHeaders.via, via ? `${via}, 1.1 ${SERVER_TOKENS}` : `1.1 ${SERVER_TOKENS}`);
      if (!ctx.responseHeaders.has('server')) ctx.setResponseHeader(KongHeaders.server, SERVER_TOKENS);
    } else {
      ctx.setResponseHeader(KongHeaders.responseLatency, String(Math.round(now - timing.start)));
      if (ctx.getResponseHeader('via') !== SERVER_TOKENS) ctx.setResponseHeader(KongHeaders.server, SERVER_TOKENS);
    }
    ctx.setResponseHeader(KongHeaders.requestId, ctx.id);
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

  /** The last Lua phase call of the request releases the VM's per-request state in the same call. */
  private planFinalLuaCall(ctx: RequestContext, plugins: Downstream): void {
    for (const phase of ['log', 'body_filter', 'header_filter'] as const) {
      const list = plugins[phase];
      for (let i = list.length - 1; i >= 0; i--) {
        const definition = list[i]![0];
        if (definition.lua) {
          this.runtime.lua.planFinalCall(ctx, definition.name, phase);
          return;
        }
      }
    }
  }
}

/** nginx's lingering_time default: how long an unread request body is read and discarded. */
const LINGERING_TIME_MS = 30_000;

function discardBody(req: IncomingMessage): void {
  const timer = setTimeout(() => req.socket.destroy(), LINGERING_TIME_MS).unref();
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

function waitForDrain(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
