import type Router from '@koa/router';
import type { Layer } from '@koa/router';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import { loneSurrogatePath } from '../schema/lone-surrogates.ts';

/**
 * kong/api/api_helpers.lua cors_filter (3.9.3), run before every route and before the 404: any
 * origin is allowed, the request's own when it names one (no admin_gui_url configured); a
 * preflight gets back the headers it asked for.
 */
export const corsFilter: Middleware = async (ctx, next) => {
  ctx.set('Access-Control-Allow-Origin', ctx.get('Origin') || '*');
  ctx.set('Access-Control-Allow-Credentials', 'true');
  const requested = ctx.get('Access-Control-Request-Headers');
  if (ctx.method === 'OPTIONS' && requested !== '') ctx.set('Access-Control-Allow-Headers', requested);
  await next();
};

const NEEDS_BODY = new Set(['PUT', 'POST', 'PATCH']);
/** Prefixes compared as Kong compares them: case-sensitive (`sub(content_type, 1, n)`). */
const BODY_TYPES = ['application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'];
const YAML_TYPES = ['application/yaml', 'text/yaml'];
/** Routes that take YAML too (api_helpers.lua ACCEPTS_YAML). */
const ACCEPTS_YAML = new Set(['/config']);

/** nginx's own page for a status it answers without a body (server_tokens off: signed openresty). */
export const nginxPage = (status: string) =>
  `<html>\r\n<head><title>${status}</title></head>\r\n<body>\r\n<center><h1>${status}</h1></center>\r\n<hr><center>openresty</center>\r\n</body>\r\n</html>\r\n`;

/** What Kong's nginx sends for `kong.response.exit(415)` with no body. */
const UNSUPPORTED_MEDIA_TYPE_PAGE = nginxPage('415 Unsupported Media Type');

/**
 * nginx refuses TRACE itself, 405 with its page, before any of Kong's Lua runs
 * (ngx_http_request.c, ngx_http_process_request_header): no CORS headers, no latency header.
 */
export const traceRefused: Middleware = async (ctx, next) => {
  if (ctx.method !== 'TRACE') {
    await next();
    return;
  }
  ctx.status = 405;
  ctx.type = 'text/html';
  ctx.body = nginxPage('405 Not Allowed');
  ctx.set('Server', 'openresty');
};

/**
 * A method no route of a known path takes, one lapis has no name for (PROPFIND) included, is 405
 * "Method not allowed": lapis' respond_to raises "don't know how to respond to", which
 * api_helpers.lua handle_error (3.9.3, :548-556) answers so, with no Allow header. An unknown path
 * stays 404 whatever the method. lapis picks a route by its path alone, those with the fewest
 * parameters first (lapis/router.lua route_precedence, Kong's lapis 1.16.0.1), so a path a route
 * without parameters matches is that route's: GET /schemas/plugins/validate is 405 (POST only), not
 * the schema of a plugin named "validate". Wraps the router's routes.
 */
export function methodNotAllowed(router: Router): Middleware {
  return async (ctx, next) => {
    const chosen = routesOf(router, ctx.path);
    if (chosen.length > 0 && !chosen.some((layer) => layer.methods.includes(ctx.method))) {
      ctx.status = 405;
      return;
    }
    await next();
  };
}

/** The routes lapis would pick for `path` (methodNotAllowed), whatever the method; none: a 404. */
export function routesOf(router: Router, path: string): Layer[] {
  const matching = router.stack.filter((layer) => layer.methods.length > 0 && layer.match(path));
  const fewest = Math.min(...matching.map((layer) => layer.paramNames.length));
  return matching.filter((layer) => layer.paramNames.length === fewest);
}

function acceptedBody(ctx: Koa.Context): boolean {
  const type = ctx.get('Content-Type');
  if (type === '') {
    const { headers } = ctx.req;
    return headers['content-length'] === '0' || (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined);
  }
  const startsWith = (prefix: string) => type.startsWith(prefix);
  return BODY_TYPES.some(startsWith) || (ACCEPTS_YAML.has(ctx.path) && YAML_TYPES.some(startsWith));
}

/**
 * api_helpers.lua before_filter (3.9.3): a write's body must be JSON, a form or multipart (YAML
 * for /config); a body of any other type, or of none named, is refused 415 before the route runs.
 */
export const mediaTypeFilter: Middleware = async (ctx, next) => {
  if (!NEEDS_BODY.has(ctx.method) || acceptedBody(ctx)) {
    await next();
    return;
  }
  ctx.status = 415;
  ctx.type = 'text/html; charset=UTF-8';
  ctx.body = UNSUPPORTED_MEDIA_TYPE_PAGE;
};

/**
 * kong/api/arguments.lua load (3.9.3, :506-541): a body whose Content-Type starts with
 * application/json is read as JSON and one that starts with application/x-www-form-urlencoded as a
 * form, whatever follows (`application/json-seq`), where koa-body knows each by its exact media
 * type: such a type is named to it as the plain one.
 */
export const kongBodyTypes: Middleware = async (ctx, next) => {
  const type = ctx.get('Content-Type').toLowerCase();
  const plain = ['application/json', 'application/x-www-form-urlencoded'].find((prefix) => type.startsWith(prefix));
  if (plain !== undefined && !ctx.is(plain)) ctx.req.headers['content-type'] = plain;
  await next();
};

/**
 * api_helpers.lua parse_params (3.9.3, :306-318), around every route's handler: a write whose
 * Content-Type names JSON but whose body lapis could not decode, an empty one too (lapis
 * json_params decodes nil), is 400 "Cannot parse JSON body". Mounted with `router.use`, it runs
 * only when a route matched, as Kong's does. `bodyBytes` is what utf8Bodies read.
 */
export const emptyJsonBody: Middleware = async (ctx, next) => {
  const json = ctx.get('Content-Type').toLowerCase().includes('application/json');
  if (NEEDS_BODY.has(ctx.method) && json && ((ctx.state as { bodyBytes?: number }).bodyBytes ?? 0) === 0) {
    ctx.status = 400;
    ctx.body = { message: 'Cannot parse JSON body' };
    return;
  }
  await next();
};

/**
 * api_helpers.lua options_method (3.9.3): OPTIONS on a known path answers 204 with the path's
 * methods (HEAD with GET, OPTIONS itself), sorted, as Allow and Access-Control-Allow-Methods.
 */
export function optionsAnswer(router: Router): Middleware {
  return (ctx) => {
    const methods = new Set(router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods));
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    const allow = [...methods].sort().join(', ');
    ctx.status = 204;
    ctx.set('Allow', allow);
    ctx.set('Access-Control-Allow-Methods', allow);
    if (!ctx.response.get('Access-Control-Allow-Headers')) ctx.set('Access-Control-Allow-Headers', 'Content-Type');
  };
}

/**
 * OPTIONS before the routes: a known path gets optionsAnswer, an unknown one goes on to the 404.
 * A path with an OPTIONS route of its own is left to it: Kong's `before` of a route runs ahead of
 * each of its methods, OPTIONS included (lapis respond_to), and may answer instead (snis.ts); a
 * route whose `before` lets the request on mounts `router.options(path, before, optionsAnswer(router))`.
 */
export function optionsMethod(router: Router): Middleware {
  const answer = optionsAnswer(router);
  return async (ctx, next) => {
    if (ctx.method !== 'OPTIONS') {
      await next();
      return;
    }
    const matched = router.match(ctx.path, ctx.method);
    if (!matched.path.some((layer) => layer.methods.length > 0) || matched.route) {
      await next();
      return;
    }
    await answer(ctx, next);
  };
}

/**
 * A JSON body with a lone surrogate escape (`"\ud800"`) is 400 "Cannot parse JSON body": Kong's
 * cjson refuses such an escape (api_helpers.lua parse_params, :306-318), where JSON.parse keeps
 * it. Stored, it would make every snapshot one the data plane's cjson cannot decode, and the
 * data plane would run no configuration after it.
 */
export const loneSurrogateJson: Middleware = async (ctx, next) => {
  if (ctx.request.is('application/json') && loneSurrogatePath(ctx.request.body) !== undefined) {
    ctx.status = 400;
    ctx.body = { message: 'Cannot parse JSON body' };
    return;
  }
  await next();
};
