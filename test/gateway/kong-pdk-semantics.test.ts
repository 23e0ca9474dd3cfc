import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { startFixture } from '../helpers/fixture.ts';

const PROBE_PLUGINS = fileURLToPath(new URL('../fixtures/plugins', import.meta.url));
const PROBES = ['pdk-probe', 'dp-probe', 'dp-probe-auth', 'dp-probe-low'];

// kong/init.lua (3.9.3) Kong.handle_error sets ctx.KONG_UNEXPECTED, and kong/pdk/response.lua
// get_source answers "error" for it before looking at KONG_EXITED: an upstream that cannot be
// reached (nginx 502 → error_page → Kong.handle_error) is an "error", not an "exit".
test('after an upstream connection failure kong.response.get_source() is "error"', async (t) => {
  const refusing = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  const port = (refusing.address() as { port: number }).port;
  const f = await startFixture(
    `
_format_version: "3.0"
services:
  - name: down
    url: http://127.0.0.1:${port}
    retries: 0
    routes: [{ name: r, paths: [/], plugins: [{ name: pdk-probe }] }]
`,
    { pluginsDir: PROBE_PLUGINS, plugins: PROBES },
  );
  t.teardown(async () => {
    await f.dispose();
    refusing.close();
  });
  const response = await f.call('/x');
  t.is(response.status, 502);
  t.is(response.headers.get('x-probe-source'), 'error');
});

// kong/pdk/response.lua (3.9.3) send(): without a body nothing is printed and, outside
// header_filter, ngx.exit(status) finalizes the request. nginx then applies
// kong/templates/nginx_kong.lua's error_page (400 404 405 408 411 412 413 414 417 494 500 502
// 503 504 → Kong.handle_error: Kong's template, KONG_UNEXPECTED), or sends its own page for
// other statuses from 300; below 300 the body stays empty.
test('kong.response.exit(status) without a body: Kong\'s default body for that status', async (t) => {
  const f = await startFixture(
    `
_format_version: "3.0"
services:
  - name: s
    url: \${UPSTREAM}
    routes:
      - name: bad-request
        paths: [/400]
        plugins: [{ name: pdk-probe }, { name: request-termination, config: { status_code: 400 } }]
      - name: forbidden
        paths: [/403]
        plugins: [{ name: pdk-probe }, { name: request-termination, config: { status_code: 403 } }]
      - name: no-content
        paths: [/204]
        plugins: [{ name: pdk-probe }, { name: request-termination, config: { status_code: 204 } }]
`,
    { pluginsDir: PROBE_PLUGINS, plugins: PROBES },
  );
  t.teardown(() => f.dispose());

  const badRequest = await f.call('/400', { headers: { accept: 'application/json' } });
  t.is(badRequest.status, 400);
  t.is(badRequest.body.message, 'Bad request');
  t.regex(badRequest.body.request_id, /^[0-9a-f]{32}$/);
  t.is(badRequest.headers.get('x-probe-source'), 'error', 'Kong.handle_error marks the response unexpected');

  const forbidden = await f.call('/403');
  t.is(forbidden.status, 403);
  // nginx_http_charset = UTF-8 (kong/templates/kong_defaults.lua): nginx's charset filter adds it to text/html.
  t.is(forbidden.headers.get('content-type'), 'text/html; charset=UTF-8');
  // OpenResty's nginx signs its own pages "openresty"; Debian's says "nginx" (docs/known-differences.md).
  const brand = f.gateway.engine.startsWith('OpenResty') ? 'openresty' : 'nginx';
  t.is(
    forbidden.body,
    `<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n<hr><center>${brand}</center>\r\n</body>\r\n</html>\r\n`,
  );
  t.is(forbidden.headers.get('x-probe-source'), 'exit');

  const noContent = await f.call('/204');
  t.is(noContent.status, 204);
  t.is(noContent.body, undefined);
  t.is(noContent.headers.get('x-probe-source'), 'exit');
});

function tiePlugin(dir: string, name: string): void {
  mkdirSync(join(dir, name));
  writeFileSync(
    join(dir, name, 'handler.lua'),
    `local P = { PRIORITY = 1000, VERSION = "1.0.0" }
function P:access(conf)
  kong.service.request.add_header("X-Order", "${name}")
end
function P:header_filter(conf)
  kong.response.add_header("X-Order", "${name}")
end
return P
`,
  );
  writeFileSync(
    join(dir, name, 'schema.lua'),
    `return { name = "${name}", fields = { { config = { type = "record", fields = {} } } } }
`,
  );
}

// kong/db/dao/plugins.lua (3.9.3) sort_by_handler_priority: equal (non-zero) priorities run in
// descending name order (`return a.name > b.name`).
test('plugins with equal PRIORITY run in Kong\'s tie order: name descending', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tie-plugins-'));
  for (const name of ['tie-alpha', 'tie-omega', 'tie-mu']) tiePlugin(dir, name);
  const f = await startFixture(
    `
_format_version: "3.0"
services:
  - name: s
    url: \${UPSTREAM}
    routes: [{ name: r, paths: [/] }]
plugins:
  - name: tie-alpha
  - name: tie-omega
  - name: tie-mu
`,
    { pluginsDir: dir },
  );
  t.teardown(async () => {
    await f.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const response = await f.call('/x');
  t.is(response.status, 200);
  t.is(f.upstream.last()!.headers['x-order'], 'tie-omega, tie-mu, tie-alpha');
  t.is(response.headers.get('x-order'), 'tie-omega, tie-mu, tie-alpha');
});

/** An entity as Kong's DAO reads it without `nulls` (kong/db/dao/init.lua row_to_entity): no null fields. */
const withoutNulls = (entity: Record<string, unknown>) => Object.fromEntries(Object.entries(entity).filter(([, value]) => value !== null));

// kong/runloop/handler.lua:110, 260, 376 (3.9.3): the router holds the routes and services as the
// DAO reads them (GLOBAL_QUERY_OPTS: show_ws_id, no nulls), and kong.router.get_route() and
// get_service() answer those rows: created_at, updated_at and tags as stored, a change included.
test('kong.router.get_route() and get_service() are the stored rows without their nulls, timestamps and tags included', async (t) => {
  const f = await startFixture(`
_format_version: "3.0"
services:
  - name: s
    url: \${UPSTREAM}
    tags: [shop]
    routes:
      - name: echo
        paths: [/echo]
        tags: [first, second]
        plugins: [{ name: request-termination, config: { echo: true, status_code: 200 } }]
`);
  t.teardown(() => f.dispose());
  const echoed = async () => (await f.call('/echo')).body as { matched_route: Record<string, unknown>; matched_service: Record<string, unknown> };

  const first = await echoed();
  t.deepEqual(first.matched_route, withoutNulls((await f.admin('/routes/echo')).body));
  t.deepEqual(first.matched_service, withoutNulls((await f.admin('/services/s')).body));
  t.deepEqual(first.matched_route.tags, ['first', 'second']);
  t.true(Number.isInteger(first.matched_service.updated_at));
  // docs/known-differences.md: no workspace id (Kong: its default workspace's, show_ws_id)
  t.is(first.matched_route.ws_id, undefined);
  t.is(first.matched_service.ws_id, undefined);

  // an Admin API write answers once the node runs it
  const patched = await f.admin('/routes/echo', { method: 'PATCH', json: { tags: ['third'] } });
  t.is(patched.status, 200);
  const second = await echoed();
  t.deepEqual(second.matched_route, withoutNulls(patched.body));
  t.deepEqual(second.matched_route.tags, ['third']);
});

// kong/db/dao/plugins.lua:146-156,190-197 (3.9.3): a handler's VERSION is the `version` rock's
// relaxed parse, what GET / reports (kong/api/routes/kong.lua available_on_server)
test('a custom plugin with a VERSION that is not x.y.z loads; GET / reports it as Kong keeps it', async (t) => {
  const f = await startFixture('_format_version: "3.0"\n', { pluginsDir: PROBE_PLUGINS, plugins: ['dp-version-tagged', 'dp-version-short'] });
  t.teardown(() => f.dispose());
  const root = await f.admin('/');
  t.is(root.status, 200);
  t.like(root.body.plugins.available_on_server, {
    'dp-version-tagged': { priority: 10, version: '0.1' },
    'dp-version-short': { priority: 11, version: '1.0' },
  });
});
