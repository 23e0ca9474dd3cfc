import test from 'ava';
import { startFixture, type Fixture } from '../helpers/fixture.ts';

// request-termination, response-transformer and correlation-id (kong/plugins/*/handler.lua,
// 3.9.1), and scope precedence (kong/runloop/plugins_iterator.lua lookup_cfg): route+consumer >
// consumer > route > service > global, whatever the order of declaration.
let f: Fixture;

test.before(async () => {
  f = await startFixture(`
_format_version: "3.0"
services:
  - name: echo
    url: \${UPSTREAM}
    plugins:
      - name: request-termination
        config: { status_code: 410, message: service scope }
    routes:
      - name: route-scoped
        paths: [/route]
        plugins:
          - name: request-termination
            config: { status_code: 418, message: route scope }
          - name: request-termination
            consumer: vip
            config: { status_code: 202, message: route and consumer scope }
      - name: service-scoped
        paths: [/service]
      - name: body
        paths: [/body]
        plugins:
          - name: request-termination
            config: { status_code: 200, body: "<p>hi</p>", content_type: text/html }
      - name: trigger
        paths: [/trigger]
        plugins:
          - name: request-termination
            config: { status_code: 403, trigger: x-stop }
  - name: open
    url: \${UPSTREAM}
    routes:
      - name: transformed
        paths: [/transformed]
        plugins:
          - name: response-transformer
            config:
              remove: { headers: [x-remove-me] }
              rename: { headers: ["x-old:x-new"] }
              replace: { headers: ["x-replace:replaced", "x-absent:never"] }
              add: { headers: ["x-added:yes", "content-type:never"] }
              append: { headers: ["x-list:one", "x-list:two"] }
      - name: correlated
        paths: [/correlated]
        plugins:
          - name: correlation-id
            config: { header_name: X-Correlation, generator: uuid, echo_downstream: true }
      - name: global-only
        paths: [/global]
consumers:
  - username: vip
    keyauth_credentials: [{ key: k-vip }]
    plugins:
      - name: request-termination
        config: { status_code: 451, message: consumer scope }
  - username: regular
    keyauth_credentials: [{ key: k-regular }]
plugins:
  - name: key-auth
    config: { anonymous: regular }
  - name: request-termination
    config: { status_code: 503, trigger: x-global-stop }
`);
});
test.after.always(async () => {
  await f?.dispose();
});

const as = (key: string) => ({ headers: { apikey: key } });

test('the most specific scope wins', async (t) => {
  t.is((await f.call('/route', as('k-regular'))).status, 418, 'route beats service');
  t.is((await f.call('/route', as('k-vip'))).status, 202, 'route+consumer beats consumer and route');
  t.is((await f.call('/service', as('k-vip'))).status, 451, 'consumer beats service');
  t.is((await f.call('/service', as('k-regular'))).status, 410, 'service beats global');
  const global = await f.call('/global', { headers: { apikey: 'k-regular', 'x-global-stop': '1' } });
  t.is(global.status, 503);
});

test('request-termination answers its message as JSON, or a raw body with its content type', async (t) => {
  const json = await f.call('/route', as('k-regular'));
  t.deepEqual(json.body, { message: 'route scope' });
  t.is(json.headers.get('content-type'), 'application/json; charset=utf-8');
  const html = await f.call('/body', as('k-regular'));
  t.is(html.body, '<p>hi</p>');
  // nginx_http_charset = UTF-8 (kong/templates/kong_defaults.lua): nginx's charset filter adds it to text/html.
  t.is(html.headers.get('content-type'), 'text/html; charset=UTF-8');
});

test('request-termination with a trigger only fires when the header or query arg is present', async (t) => {
  // The route's instance is the one chosen (it shadows the service's); without its trigger it
  // does nothing and the request is proxied.
  t.is((await f.call('/trigger', as('k-regular'))).status, 200);
  const stopped = await f.call('/trigger', { headers: { apikey: 'k-regular', 'x-stop': '1' } });
  t.is(stopped.status, 403);
  // request-termination has no default message for 403, so it calls kong.response.exit(403) without
  // a body: send() prints nothing and calls ngx.exit(403) (kong/pdk/response.lua, 3.9.3), and nginx
  // answers with its own page, 403 having no error_page in kong/templates/nginx_kong.lua.
  t.is(stopped.headers.get('content-type'), 'text/html; charset=UTF-8');
  t.regex(String(stopped.body), /<title>403 Forbidden<\/title>/);
  t.is((await f.call('/trigger?x-stop', as('k-regular'))).status, 403);
});

test('response-transformer removes, renames, replaces, adds and appends headers in that order', async (t) => {
  f.upstream.server.removeAllListeners('request');
  f.upstream.server.on('request', (_req, res) => {
    res.setHeader('x-remove-me', '1');
    res.setHeader('x-old', 'renamed');
    res.setHeader('x-replace', 'original');
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  const response = await f.call('/transformed');
  t.is(response.headers.get('x-remove-me'), null);
  t.is(response.headers.get('x-old'), null);
  t.is(response.headers.get('x-new'), 'renamed');
  t.is(response.headers.get('x-replace'), 'replaced');
  t.is(response.headers.get('x-absent'), null, 'replace only touches present headers');
  t.is(response.headers.get('x-added'), 'yes');
  t.is(response.headers.get('content-type'), 'application/json', 'add never overwrites');
  t.is(response.headers.get('x-list'), 'one, two');
});

test('correlation-id sets the header upstream and echoes it downstream', async (t) => {
  const response = await f.call('/correlated');
  const id = response.headers.get('x-correlation');
  t.regex(id!, /^[0-9a-f-]{36}$/);
  const given = await f.call('/correlated', { headers: { 'x-correlation': 'mine' } });
  t.is(given.headers.get('x-correlation'), 'mine');
});
