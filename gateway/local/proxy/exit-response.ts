import { defaultErrorMessage } from '../kong/error-template.ts';
import { KONG_ERROR_PAGES, nginxSpecialPage } from '../kong/nginx-defaults.ts';
import type { ExitResponse, RequestContext } from './request-context.ts';

/**
 * kong.response.exit's send() (kong/pdk/response.lua, 3.9.3): sets the status and headers on
 * `ctx` and returns the body. A table body becomes JSON with its Content-Type; a string is sent as
 * is. Without a body, send() prints nothing and, outside header_filter, calls ngx.exit(status):
 * nginx then finalizes the request with that status, so the statuses nginx_kong.lua gives an
 * error_page get Kong.handle_error's template (and KONG_UNEXPECTED: source "error"), other
 * statuses from 300 nginx's own page, and the rest an empty body.
 */
export function exitBody(ctx: RequestContext, exit: ExitResponse, inHeaderFilter: boolean): Buffer {
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
      // kong/error_handlers.lua: the format follows Accept, else Content-Type; 494 goes out as 400.
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
