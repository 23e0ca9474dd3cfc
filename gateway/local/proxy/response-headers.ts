import { KongHeaders } from '../kong/headers.ts';
import { SERVER_TOKENS } from '../control-plane/kong-version.ts';
import type { RequestContext } from './request-context.ts';

const HOP_BY_HOP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade', 'proxy-connection']);

/** The upstream's response headers as the client will get them, hop-by-hop headers left out. */
export function copyUpstreamHeaders(ctx: RequestContext, headers: Record<string, string | string[] | undefined>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP_RESPONSE.has(name)) ctx.setResponseHeader(name, value);
  }
}

/** kong/runloop/handler.lua header_filter.after: latency headers, Via, Server, the request id. */
export function addKongHeaders(ctx: RequestContext, now = performance.now()): void {
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
