import { Readable } from 'node:stream';
import { SERVER_TOKENS } from '../control-plane/kong-version.ts';
import type { RequestContext } from './request-context.ts';
import { escapeUri } from './uri.ts';

/**
 * Request headers Kong sets itself or that concern one hop only: nginx_kong.lua's
 * proxy_set_header lines (TE, Via, Host, Upgrade, Connection, X-Forwarded-*, X-Real-IP) and
 * ngx_http_proxy_module's own defaults (Keep-Alive, Expect and Transfer-Encoding are not passed).
 */
const NOT_FORWARDED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length',
  'expect', 'via', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'x-forwarded-path',
  'x-forwarded-prefix', 'x-real-ip', 'x-kong-request-id',
]);

/** The request line target sent upstream: $upstream_uri (escaped path plus the query). */
export function upstreamTarget(ctx: RequestContext): string {
  return escapeUri(ctx.upstreamPath) + (ctx.upstreamQuery ? `?${ctx.upstreamQuery}` : '');
}

/**
 * The headers Kong sends upstream (kong/runloop/handler.lua access.after, 3.9.3, and the
 * proxy_set_header lines of nginx_kong.lua): the client's headers as the plugins left them, Host
 * per preserve_host/$upstream_host, X-Forwarded-*, X-Real-IP, Via and X-Kong-Request-Id.
 * `contentLength` is the body's length when known; otherwise the body goes chunked.
 */
export function upstreamHeaders(
  ctx: RequestContext,
  clientHost: string | undefined,
  contentLength: number | undefined,
): Record<string, string | string[]> {
  const service = ctx.service!;
  const route = ctx.route!;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of ctx.requestHeaders) if (!NOT_FORWARDED.has(name)) headers[name] = value;
  const defaultPort = service.protocol === 'https' ? 443 : 80;
  // A non-empty $upstream_host (set by a plugin, or by the router under preserve_host) is sent
  // as is; otherwise the service's host[:port].
  headers.host =
    ctx.upstreamHost ?? (route.preserve_host && clientHost ? clientHost : service.port === defaultPort ? service.host : `${service.host}:${service.port}`);
  const clientXff = ctx.requestHeaders.get('x-forwarded-for');
  headers['x-forwarded-for'] = clientXff ? `${Array.isArray(clientXff) ? clientXff.join(', ') : clientXff}, ${ctx.clientIp}` : ctx.clientIp;
  headers['x-forwarded-proto'] = ctx.scheme;
  headers['x-forwarded-host'] = ctx.host;
  headers['x-forwarded-port'] = String(ctx.port);
  headers['x-forwarded-path'] = ctx.path;
  if (ctx.strippedPrefix !== undefined && ctx.strippedPrefix !== '/') headers['x-forwarded-prefix'] = ctx.strippedPrefix;
  headers['x-real-ip'] = ctx.clientIp;
  headers['x-kong-request-id'] = ctx.id;
  const clientVia = ctx.requestHeaders.get('via');
  headers.via = clientVia ? `${Array.isArray(clientVia) ? clientVia.join(', ') : clientVia}, 1.1 ${SERVER_TOKENS}` : `1.1 ${SERVER_TOKENS}`;
  if (contentLength !== undefined) headers['content-length'] = String(contentLength);
  return headers;
}

/**
 * The client's request body as the upstream client reads it: nothing is pulled from the client
 * until the upstream connection asks for the first chunk, so a try that failed before that can be
 * retried with the same body; backpressure reaches the client socket (bounded memory).
 */
export class StreamedBody {
  private pulled = false;

  constructor(
    private readonly source: Readable,
    /** Called once, when the upstream first asks for data (sends `100 Continue` if the client waits). */
    private readonly onFirstPull: () => void,
    /** Why the rest of the body will never come (the parser rejected it), if it will not. */
    private readonly failure: () => Error | undefined = () => undefined,
  ) {}

  /** Some of the body has been handed to an upstream connection: it cannot be sent again. */
  get started(): boolean {
    return this.pulled;
  }

  /** A fresh readable for one upstream try. */
  open(): Readable {
    const { source } = this;
    let onData: ((chunk: Buffer) => void) | undefined;
    let onEnd: (() => void) | undefined;
    let onError: ((error: Error) => void) | undefined;
    const detach = () => {
      if (onData) source.off('data', onData);
      if (onEnd) source.off('end', onEnd);
      if (onError) source.off('error', onError);
      onData = onEnd = onError = undefined;
    };
    const body: Readable = new Readable({
      read: () => {
        if (!onData) {
          if (!this.pulled) {
            this.pulled = true;
            this.onFirstPull();
          }
          onData = (chunk) => {
            if (!body.push(chunk)) source.pause();
          };
          onEnd = () => {
            detach();
            body.push(null);
          };
          onError = (error) => {
            detach();
            body.destroy(error);
          };
          source.on('data', onData);
          source.once('end', onEnd);
          source.once('error', onError);
          const failed = this.failure();
          if (source.readableEnded) onEnd();
          else if (failed) onError(failed);
          else if (source.destroyed) onError(new Error('the client closed the connection before its body was sent'));
        }
        source.resume();
      },
      destroy: (error, callback) => {
        detach();
        source.pause();
        callback(error);
      },
    });
    return body;
  }
}
