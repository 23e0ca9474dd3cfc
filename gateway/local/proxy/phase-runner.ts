import type { PluginConfig, PluginDefinition, PluginEnvironment } from '../plugins/plugin.ts';
import { ClientBodyError } from './client-body.ts';
import { ExitSignal, type ExitResponse, type RequestContext } from './request-context.ts';

export type Step = readonly [PluginDefinition, PluginConfig];

const noExit = (): undefined => undefined;

/** A header_filter or body_filter handler failed: nginx aborts the request (see PhaseRunner). */
export class FilterAbort extends Error {
  constructor(readonly plugin: string, readonly phase: 'header_filter' | 'body_filter', cause: unknown) {
    super(`${plugin} (${phase}): failed to run ${phase}_by_lua*: ${(cause as Error)?.message ?? String(cause)}; request aborted`);
  }
}

/**
 * The one place that runs plugin handlers and interprets how they end (kong/init.lua, 3.9.3):
 *
 * - rewrite and access: `kong.response.exit` ends the handler and becomes the response (in access,
 *   delayed until the iterator is done: the caller stops calling handlers once it has one). A
 *   handler that raises is logged and answered 500 `{"message":"An unexpected error occurred"}`
 *   with KONG_UNEXPECTED set (execute_collecting_plugins_iterator).
 * - header_filter and body_filter run without a pcall (execute_collected_plugins_iterator): an
 *   error ends the phase, nginx logs "failed to run header_filter_by_lua*" and aborts the request,
 *   closing the connection with no (further) response (openresty/lua-nginx-module#2314). An exit
 *   in header_filter ends the whole phase (ngx.exit(ngx.OK)) and replaces the response.
 * - log: errors are logged, nothing else happens.
 */
export class PhaseRunner {
  constructor(private readonly env: PluginEnvironment) {}

  /**
   * Runs one rewrite or access handler; the exit it made, if any. Synchronous for a synchronous
   * handler (most are): only a handler that returns a promise costs the request a turn of the
   * microtask queue.
   */
  rewriteOrAccess(step: Step, phase: 'rewrite' | 'access', ctx: RequestContext): ExitResponse | undefined | Promise<ExitResponse | undefined> {
    const [definition, config] = step;
    try {
      const pending = definition[phase]!(ctx, config, this.env);
      if (pending) return pending.then(noExit, (error: unknown) => this.failedRewriteOrAccess(definition.name, phase, ctx, error));
      return undefined;
    } catch (error) {
      return this.failedRewriteOrAccess(definition.name, phase, ctx, error);
    }
  }

  /** How a rewrite or access handler that threw ends the request. */
  private failedRewriteOrAccess(plugin: string, phase: 'rewrite' | 'access', ctx: RequestContext, error: unknown): ExitResponse {
    if (error instanceof ExitSignal) return error.response;
    if (error instanceof ClientBodyError) {
      // Reading the body failed on the client's side (ngx.req.read_body): nginx finalizes the
      // request itself, and error_page hands it to Kong.handle_error.
      this.env.log('info', `${plugin} (${phase}): ${error.message}`);
      ctx.markUnexpected();
      return { status: error.status };
    }
    this.env.log('err', `${plugin} (${phase}): ${(error as Error)?.message ?? String(error)}`);
    ctx.markUnexpected();
    return { status: 500, body: { message: 'An unexpected error occurred' } };
  }

  /** Runs every header_filter handler; returns the exit one of them made, if any. Throws FilterAbort. */
  headerFilter(steps: readonly Step[], ctx: RequestContext): ExitResponse | undefined {
    for (const [definition, config] of steps) {
      try {
        void definition.header_filter!(ctx, config, this.env);
      } catch (error) {
        if (error instanceof ExitSignal) return error.response;
        throw new FilterAbort(definition.name, 'header_filter', error);
      }
    }
    return undefined;
  }

  /** Runs the body_filter handlers on one chunk, as nginx does for each buffer. Throws FilterAbort. */
  async bodyFilter(steps: readonly Step[], ctx: RequestContext, chunk: Buffer, eof: boolean): Promise<{ chunk: Buffer; eof: boolean }> {
    ctx.beginBodyChunk(chunk, eof);
    for (const [definition, config] of steps) {
      try {
        const pending = definition.body_filter!(ctx, config, this.env, chunk);
        if (pending) await pending;
      } catch (error) {
        ctx.endBodyChunk();
        throw new FilterAbort(definition.name, 'body_filter', error);
      }
    }
    return ctx.endBodyChunk();
  }

  log(steps: readonly Step[], ctx: RequestContext): void {
    for (const [definition, config] of steps) {
      try {
        const pending = definition.log!(ctx, config, this.env);
        if (pending) pending.catch((error: Error) => this.env.log('err', `${definition.name} (log): ${error.message}`));
      } catch (error) {
        this.env.log('err', `${definition.name} (log): ${(error as Error).message}`);
      }
    }
  }
}
