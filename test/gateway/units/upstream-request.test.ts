import test from 'ava';
import { exitBody } from '../../../gateway/local/proxy/exit-response.ts';
import { RequestContext } from '../../../gateway/local/proxy/request-context.ts';
import { upstreamHeaders, upstreamTarget } from '../../../gateway/local/proxy/upstream-request.ts';
import type { Route, Service } from '../../../gateway/local/control-plane/db/entities.ts';

const service = { protocol: 'http', host: 'backend', port: 3000, path: null } as Service;
const route = { preserve_host: false } as Route;

function context(headers: Record<string, string> = {}) {
  const ctx = new RequestContext({
    id: 'rid', startedAt: 0, method: 'POST', scheme: 'http', host: 'api.example', port: 8000, path: '/v1/pets', query: 'a=1',
    headers: new Map(Object.entries({ host: 'api.example:8000', ...headers })), clientIp: '10.0.0.7',
  });
  ctx.service = service;
  ctx.route = route;
  ctx.strippedPrefix = '/v1';
  ctx.upstreamPath = '/pets';
  return ctx;
}

// kong/templates/nginx_kong.lua (3.9.3) proxy_set_header lines and kong/runloop/handler.lua access.after.
test('X-Forwarded-*, X-Real-IP, Via and the request id are Kong\'s; hop-by-hop and Expect are not passed', (t) => {
  const headers = upstreamHeaders(context({ 'x-forwarded-for': '1.2.3.4', expect: '100-continue', connection: 'keep-alive', te: 'trailers', 'x-mine': 'kept' }), 'api.example:8000', 12);
  t.like(headers, {
    host: 'backend:3000',
    'x-forwarded-for': '1.2.3.4, 10.0.0.7',
    'x-forwarded-proto': 'http',
    'x-forwarded-host': 'api.example',
    'x-forwarded-port': '8000',
    'x-forwarded-path': '/v1/pets',
    'x-forwarded-prefix': '/v1',
    'x-real-ip': '10.0.0.7',
    'x-kong-request-id': 'rid',
    'content-length': '12',
    'x-mine': 'kept',
  });
  t.regex(String(headers.via), /^1\.1 kong\//);
  for (const name of ['expect', 'connection', 'te']) t.false(name in headers, name);
});

test('Host: a plugin\'s $upstream_host, else the client\'s under preserve_host, else the service\'s', (t) => {
  const ctx = context();
  ctx.route = { preserve_host: true } as Route;
  t.is(upstreamHeaders(ctx, 'api.example:8000', undefined).host, 'api.example:8000');
  ctx.setServiceHeader('Host', 'set.example');
  t.is(upstreamHeaders(ctx, 'api.example:8000', undefined).host, 'set.example');
  const plain = context();
  plain.service = { ...service, port: 80 };
  t.is(upstreamHeaders(plain, undefined, undefined).host, 'backend');
  t.false('content-length' in upstreamHeaders(plain, undefined, undefined), 'a body of unknown length goes chunked');
});

test('the upstream target escapes the path and keeps the query', (t) => {
  const ctx = context();
  ctx.upstreamPath = '/pets/a b';
  t.is(upstreamTarget(ctx), '/pets/a%20b?a=1');
});

// kong/pdk/response.lua (3.9.3) send().
test('exitBody: a table is JSON, a string as is, no body per nginx\'s error pages', (t) => {
  const json = context();
  t.is(exitBody(json, { status: 418, body: { a: 1 } }, false).toString(), '{"a":1}');
  t.is(json.getResponseHeader('content-type'), 'application/json; charset=utf-8');
  t.is(exitBody(context(), { status: 200, body: 'plain' }, false).toString(), 'plain');
  const notFound = context({ accept: 'text/plain' });
  t.is(exitBody(notFound, { status: 404 }, false).toString(), 'Not found\nrequest_id: rid\n');
  t.is(notFound.source, 'error');
  t.regex(exitBody(context(), { status: 429 }, false).toString(), /<title>429 Too Many Requests<\/title>/);
  t.is(exitBody(context(), { status: 429 }, true).length, 0, 'in header_filter: ngx.exit(ngx.OK), no page');
  t.is(exitBody(context(), { status: 418 }, false).length, 0, 'no nginx page for 418');
});
