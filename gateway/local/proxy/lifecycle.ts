import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { headerMapFrom } from '../kong/headers.ts';
import { DOWNSTREAM_PHASES } from '../plugins/plugin.ts';
import { PluginSet } from '../plugins/plugin-set.ts';
import type { GatewayRuntime } from '../runtime/gateway-runtime.ts';
import { ClientBody } from './client-body.ts';
import { ConnectionGuard, newRequestId, sendEarlyResponse } from './client-errors.ts';
import { UpstreamReadError, discardBody, pipeUnfiltered, streamFiltered, writeHead } from './downstream.ts';
import { exitBody } from './exit-response.ts';
import { FilterAbort, PhaseRunner, type Step } from './phase-runner.ts';
import { RequestContext, type ExitResponse } from './request-context.ts';
import { readRequestHead } from './request-head.ts';
import { addKongHeaders, copyUpstreamHeaders } from './response-headers.ts';
import { UpstreamError, sendWithRetries, type UpstreamPool, type UpstreamResponse } from './upstream.ts';
import { upstreamHeaders, upstreamTarget } from './upstream-request.ts';
import { normalizePath, upstreamPath } from './uri.ts';

/** The plugins whose downstream handlers run for this request, in order (ctx.plugins in Kong). */
type Downstream = Record<(typeof DOWNSTREAM_PHASES)[number], Step[]>;

/** Who produces the response: Kong (an exit, whatever the phase) or the upstream. */
type Outcome = { exit: ExitResponse } | { upstream: UpstreamResponse };

/** What header_filter leaves to send: a body Kong produced, or the upstream's to stream. */
type Pending = { generated: Buffer } | { upstream: UpstreamResponse };

/** An abort signal undici accepts (an EventEmitter with `aborted`): cheaper than an AbortController per request. */
class AbortSignalEmitter extends EventEmitter {
  aborted = false;

  abort(): void {
    this.aborted = true;
    this.emit('abort');
  }
}

/**
 * One proxied request, phase by phase, as kong/init.lua (3.9.3) runs it: Kong.rewrite (global
 * plugins), the router, Kong.access (plugins collected by precedence, an exit delayed until the
 * iterator is done), Kong.balancer (the upstream call and its retries), Kong.header_filter,
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

    // The plugins collected in access; when rewrite exits or no route matches, the global ones.
    let collected: Downstream | undefined;
    let outcome = await this.rewrite(ctx);
    if (!outcome) {
      const noRoute = this.route(ctx);
      if (noRoute) outcome = { exit: noRoute };
      else {
        collected = { header_filter: [], body_filter: [], log: [] };
        outcome = await this.access(ctx, collected);
      }
    }
    const plugins = collected ?? this.globalDownstream();
    outcome ??= await this.balancer(ctx, body, head.hostHeader, res);
    this.planFinalLuaCall(ctx, plugins);

    const done = this.logWhenDone(req, res, ctx, body, plugins);
    // A client still waiting for `100 Continue` may or may not send its body: the connection cannot
    // be reused. Otherwise an unread body is discarded after the response, as nginx does.
    if (body.clientWaitsForContinue || body.failed) res.shouldKeepAlive = false;
    if (res.destroyed) {
      if ('upstream' in outcome) outcome.upstream.body.resume();
      return;
    }
    try {
      const pending = this.headerFilter(ctx, plugins, outcome);
      await this.bodyFilter(res, ctx, plugins, pending);
    } catch (error) {
      if (!(error instanceof FilterAbort || error instanceof UpstreamReadError)) throw error;
      // See PhaseRunner: nginx aborts the request; the log phase still runs (on 'close').
      this.runtime.log('err', error.message);
      if ('upstream' in outcome) outcome.upstream.body.resume();
      done.aborted = true;
      res.destroy();
    }
  }

  /** Kong.rewrite: global plugins only, before the router; an exit answers at once. */
  private async rewrite(ctx: RequestContext): Promise<Outcome | undefined> {
    for (const entry of this.runtime.plugins.entries) {
      if (!entry.global || !entry.definition.rewrite) continue;
      const ran = this.phases.rewriteOrAccess([entry.definition, entry.global], 'rewrite', ctx);
      const exit = ran instanceof Promise ? await ran : ran;
      if (exit) return { exit };
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
      if (definition.access && !exit) {
        // Awaited only when the handler was asynchronous (see PhaseRunner.rewriteOrAccess).
        const ran = this.phases.rewriteOrAccess([definition, config], 'access', ctx);
        exit = ran instanceof Promise ? await ran : ran;
      }
    }
    if (!exit && !ctx.route!.protocols.includes('http')) {
      ctx.markExited();
      exit = ctx.errorResponse(426, 'Please use HTTPS protocol', { Connection: 'Upgrade', Upgrade: 'TLS/1.2, HTTP/1.1' });
    }
    return exit ? { exit } : undefined;
  }

  /**
   * Kong.balancer and the proxy: the upstream call with the service's retries. A failure is
   * answered as nginx does (error_page → Kong.handle_error, which sets KONG_UNEXPECTED: the
   * response's source is "error"), the body format following Accept, else Content-Type.
   */
  private async balancer(ctx: RequestContext, body: ClientBody, hostHeader: string | undefined, res: ServerResponse): Promise<Outcome> {
    const requestBody = body.forUpstream();
    const length = requestBody instanceof Buffer ? requestBody.length : body.chunked ? undefined : body.declaredLength;
    // proxy_ignore_client_abort off: a client that goes away ends the upstream request too.
    const clientGone = new AbortSignalEmitter();
    const onClose = () => {
      if (!res.writableFinished) clientGone.abort();
    };
    res.once('close', onClose);
    ctx.timing.upstreamStart = performance.now();
    try {
      const upstream = await sendWithRetries(this.upstreams, {
        service: ctx.service!,
        method: ctx.method,
        path: upstreamTarget(ctx),
        headers: upstreamHeaders(ctx, hostHeader, length),
        body: requestBody,
        signal: clientGone,
      });
      ctx.timing.upstreamResponse = performance.now();
      return { upstream };
    } catch (error) {
      ctx.markUnexpected();
      if (clientGone.aborted || res.destroyed) {
        this.runtime.log('info', `client closed the connection while ${ctx.method} ${ctx.path} was proxied (499)`);
        return { exit: { status: 499, body: '' } };
      }
      const accept = ctx.getHeader('accept') ?? ctx.getHeader('content-type');
      if (body.failed) return { exit: ctx.errorResponse(body.failed.status, undefined, {}, accept) };
      if (!(error instanceof UpstreamError)) throw error;
      this.runtime.log('err', `upstream: ${error.message} while proxying ${ctx.method} ${ctx.path}`);
      return { exit: ctx.errorResponse(error.status, error.clientMessage, {}, accept) };
    } finally {
      res.off('close', onClose);
    }
  }

  /**
   * Kong.header_filter: the response's status and headers (an exit's, or the upstream's without
   * hop-by-hop headers) through the plugins, then Kong's own headers (header_filter.after).
   */
  private headerFilter(ctx: RequestContext, plugins: Downstream, outcome: Outcome): Pending {
    let pending: Pending;
    if ('exit' in outcome) pending = { generated: exitBody(ctx, outcome.exit, false) };
    else {
      ctx.markProxied();
      ctx.status = outcome.upstream.status;
      copyUpstreamHeaders(ctx, outcome.upstream.headers);
      pending = outcome;
    }
    const exit = this.phases.headerFilter(plugins.header_filter, ctx);
    if (exit) {
      // kong.response.exit in header_filter: ngx.exit(ngx.OK) ends the phase; its body replaces the response.
      if ('upstream' in pending) pending.upstream.body.resume();
      return { generated: exitBody(ctx, exit, true) };
    }
    addKongHeaders(ctx);
    return pending;
  }

  /** Kong.body_filter: a body Kong produced is one chunk; the upstream's streams chunk by chunk. */
  private async bodyFilter(res: ServerResponse, ctx: RequestContext, plugins: Downstream, pending: Pending): Promise<void> {
    const steps = plugins.body_filter;
    if ('generated' in pending) {
      const { chunk } = await this.phases.bodyFilter(steps, ctx, pending.generated, true);
      const isHead = ctx.method === 'HEAD';
      ctx.clearResponseHeader('content-length');
      if (!isHead) ctx.setResponseHeader('Content-Length', String(chunk.length));
      writeHead(res, ctx);
      res.end(isHead ? undefined : chunk);
      return;
    }
    writeHead(res, ctx);
    if (steps.length === 0) pipeUnfiltered(res, pending.upstream.body, (error) => this.runtime.log('err', error.message));
    else await streamFiltered(res, pending.upstream.body, (chunk, eof) => this.phases.bodyFilter(steps, ctx, chunk, eof));
  }

  /** Kong.log, once the response is sent or the client is gone; then the unread body is discarded. */
  private logWhenDone(
    req: IncomingMessage,
    res: ServerResponse,
    ctx: RequestContext,
    body: ClientBody,
    plugins: Downstream,
  ): { aborted: boolean } {
    const state = { aborted: false, logged: false };
    const log = () => {
      if (state.logged) return;
      state.logged = true;
      this.phases.log(plugins.log, ctx);
      this.runtime.lua.release(ctx);
      if (!req.complete && !body.clientWaitsForContinue) discardBody(req);
    };
    if (res.destroyed) {
      log();
      return state;
    }
    res.once('finish', log);
    res.once('close', () => {
      if (!res.writableFinished && !state.aborted) {
        this.runtime.log('info', `client closed the connection before the response to ${ctx.method} ${ctx.path} was sent`);
      }
      log();
    });
    return state;
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
