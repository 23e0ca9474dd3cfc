import { request } from 'node:http';
import test from 'ava';
import { startFixture, type Fixture } from '../helpers/fixture.ts';
import { RawConnection, rawRequest as sendRaw } from '../helpers/raw-http.ts';

// How the Admin API takes a request before any route runs, as Kong 3.9.3's does
// (kong/api/api_helpers.lua cors_filter, before_filter, options_method), transcribing Kong's
// spec/02-integration/04-admin_api (Kong started without admin_gui_url).
let f: Fixture;
let url: (path: string) => string;

test.before(async () => {
  f = await startFixture('_format_version: "3.0"\n');
  url = (path) => `${f.gateway.adminUrl}${path}`;
});
test.after.always(async () => {
  await f?.dispose();
});

test('OPTIONS: 204, no body, the path\'s methods as Allow and CORS headers (02-kong_routes_spec.lua:59-72)', async (t) => {
  const response = await fetch(url('/'), { method: 'OPTIONS' });
  t.is(response.status, 204);
  t.is(await response.text(), '');
  t.is(response.headers.get('allow'), 'GET, HEAD, OPTIONS');
  t.is(response.headers.get('access-control-allow-methods'), 'GET, HEAD, OPTIONS');
  t.is(response.headers.get('access-control-allow-headers'), 'Content-Type');
  t.is(response.headers.get('access-control-allow-origin'), '*');
  t.not(response.headers.get('x-kong-admin-latency'), null);
});

test('OPTIONS: each route its own methods (23-cors_spec.lua:28-56)', async (t) => {
  for (const [path, methods] of [
    ['/routes', 'GET, HEAD, OPTIONS, POST'],
    ['/routes/test', 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT'],
    ['/consumers/someone/key-auth', 'GET, HEAD, OPTIONS, POST'],
  ] as const) {
    const response = await fetch(url(path), { method: 'OPTIONS' });
    t.is(response.status, 204, path);
    t.is(response.headers.get('allow'), methods, path);
    t.is(response.headers.get('access-control-allow-methods'), methods, path);
  }
});

test('OPTIONS on an unknown path is the 404 (02-kong_routes_spec.lua:656-663)', async (t) => {
  const response = await fetch(url('/non-existing'), { method: 'OPTIONS' });
  t.is(response.status, 404);
  t.deepEqual(await response.json(), { message: 'Not found' });
});

test('a preflight gets back the headers it asked for; a main request does not (23-cors_spec.lua:58-122)', async (t) => {
  const preflight = await fetch(url('/'), { method: 'OPTIONS', headers: { 'Access-Control-Request-Headers': 'X-Header-1,X-Header-2' } });
  t.is(preflight.headers.get('access-control-allow-headers'), 'X-Header-1,X-Header-2');
  const main = await fetch(url('/'), {
    headers: { 'Access-Control-Request-Method': 'PATCH', 'Access-Control-Request-Headers': 'X-Header-1,X-Header-2' },
  });
  t.is(main.status, 200);
  t.is(main.headers.get('access-control-allow-methods'), null);
  t.is(main.headers.get('access-control-allow-headers'), null);
});

test('every answer allows the request\'s Origin, or any without one (23-cors_spec.lua:124-152)', async (t) => {
  const withOrigin = await fetch(url('/'), { headers: { Origin: 'http://example.com' } });
  t.is(withOrigin.headers.get('access-control-allow-origin'), 'http://example.com');
  t.is(withOrigin.headers.get('access-control-allow-credentials'), 'true');
  const preflight = await fetch(url('/'), { method: 'OPTIONS', headers: { Origin: 'http://example.com' } });
  t.is(preflight.headers.get('access-control-allow-origin'), 'http://example.com');
  const without = await fetch(url('/consumers/nobody'));
  t.is(without.status, 404);
  t.is(without.headers.get('access-control-allow-origin'), '*');
});

test('a write whose body is not JSON, a form or multipart is refused 415 (03-consumers_routes_spec.lua:135-150, 448-465)', async (t) => {
  const refused = [
    await fetch(url('/consumers'), { method: 'POST', body: '{"hello": "world"}', headers: { 'Content-Type': 'invalid' } }),
    // fetch names a string body text/plain; Kong's spec sends none: both are refused
    await fetch(url('/consumers'), { method: 'POST', body: 'invalid' }),
    await fetch(url('/consumers'), { method: 'POST', body: Buffer.from('invalid') }),
    await fetch(url('/consumers/nobody'), { method: 'PATCH', body: '{"hello": "world"}', headers: { 'Content-Type': 'invalid' } }),
    await fetch(url('/consumers'), { method: 'POST', body: '{"username": "x"}', headers: { 'Content-Type': 'Application/JSON' } }),
  ];
  for (const response of refused) {
    t.is(response.status, 415);
    t.regex(await response.text(), /<title>415 Unsupported Media Type<\/title>/);
  }
  t.is((await f.admin('/consumers/x')).status, 404, 'nothing was stored');
  // no body at all, or an empty one, needs no type: the route answers (here, the schema's check)
  const empty = await fetch(url('/consumers'), { method: 'POST', headers: { 'Content-Length': '0' } });
  t.is(empty.status, 400);
  t.is(((await empty.json()) as { name: string }).name, 'schema violation');
});

test('a type that starts with application/json is JSON, with application/x-www-form-urlencoded a form, whatever follows (arguments.lua:506-541, api_helpers.lua:260-262, 312-317)', async (t) => {
  const post = (type: string, body: string) => fetch(url('/consumers'), { method: 'POST', body, headers: { 'Content-Type': type } });
  const seq = await post('application/json-seq', '{"username": "json-seq"}');
  t.is(seq.status, 201);
  t.like(await seq.json(), { username: 'json-seq' });
  const form = await post('application/x-www-form-urlencoded-x', 'username=form-suffix&custom_id=');
  t.is(form.status, 201);
  t.like(await form.json(), { username: 'form-suffix', custom_id: null });
  // parse_params finds application/json in the type: what lapis cannot decode is 400
  const broken = await post('application/json-seq', '{"username": ');
  t.deepEqual([broken.status, await broken.json()], [400, { message: 'Cannot parse JSON body' }]);
});

// cjson refuses an escape of a lone surrogate (lua-cjson json_append_unicode_escape), so Kong's
// parse_params answers 400 (api_helpers.lua:306-318); stored, it would make every snapshot one the
// data plane's cjson cannot decode, and no configuration would run after it.
test('a JSON body with a lone surrogate escape anywhere is 400 Cannot parse JSON body, and nothing is stored', async (t) => {
  const json = { 'Content-Type': 'application/json' };
  for (const [method, path, body] of [
    ['POST', '/consumers', '{"username": "lone\\ud800x"}'],
    ['PUT', '/consumers/lone-put', '{"custom_id": "\\udc00"}'],
    ['POST', '/consumers', '{"username": "tagged", "tags": ["a\\ud83d"]}'],
    ['POST', '/plugins', '{"name": "request-termination", "config": {"message": "x\\udfff"}}'],
    ['POST', '/consumers', '{"username": "key", "\\ud800": 1}'],
  ] as const) {
    const response = await fetch(url(path), { method, headers: json, body });
    t.deepEqual([response.status, await response.json()], [400, { message: 'Cannot parse JSON body' }], `${method} ${path} ${body}`);
  }
  t.is((await f.admin('/consumers/lone-put')).status, 404);
  t.is((await f.admin('/consumers/tagged')).status, 404);
  // a pair is a character like any other
  const pair = await fetch(url('/consumers'), { method: 'POST', headers: json, body: '{"username": "pair\\ud83d\\ude00"}' });
  t.is(pair.status, 201);
  t.like(await pair.json(), { username: 'pair\u{1F600}' });
});

test('a write naming JSON with no body is 400 Cannot parse JSON body, on a route only (03-consumers_routes_spec.lua:152-160, 467-480)', async (t) => {
  const json = { 'Content-Type': 'application/json' };
  for (const [method, path] of [['POST', '/consumers'], ['PATCH', '/consumers/nobody'], ['PUT', '/consumers/nobody']] as const) {
    const response = await fetch(url(path), { method, headers: json });
    t.is(response.status, 400, `${method} ${path}`);
    t.deepEqual(await response.json(), { message: 'Cannot parse JSON body' }, `${method} ${path}`);
  }
  // api_helpers.lua parse_params wraps route handlers: no route, the 404; a form without a body, the schema's check
  t.is((await fetch(url('/non-existing'), { method: 'POST', headers: json })).status, 404);
  const form = await fetch(url('/consumers'), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  t.is(((await form.json()) as { name: string }).name, 'schema violation');
});

/** A body in each of the three types Kong's specs send (it_content_types): a form, multipart, and JSON when given. */
function form(fields: [string, string][]): URLSearchParams {
  return new URLSearchParams(fields);
}
function multipart(fields: [string, string][]): FormData {
  const data = new FormData();
  for (const [name, value] of fields) data.append(name, value);
  return data;
}

test('a form and a multipart body are read by the entity\'s schema: numbers, booleans, lists (10-services_routes_spec.lua:53-76)', async (t) => {
  for (const [kind, encode] of [['form', form], ['multipart', multipart]] as const) {
    const service = await fetch(url('/services'), {
      method: 'POST',
      body: encode([['name', `svc-${kind}`], ['protocol', 'http'], ['host', 'service.test'], ['port', '8080'], ['retries', ' 3 '], ['tags[]', kind]]),
    });
    t.is(service.status, 201, kind);
    t.like(await service.json(), { name: `svc-${kind}`, port: 8080, retries: 3, connect_timeout: 60000, tags: [kind] }, kind);
    // 09-routes_routes_spec.lua:185-211: lists by repeated or indexed names, a foreign key by a dotted one
    const route = await fetch(url('/routes'), {
      method: 'POST',
      body: encode([
        ['methods[1]', 'GET'], ['methods[2]', 'POST'],
        // a form's repeated name is a list; multipart's keeps its last part (see below)
        ...(kind === 'form' ? [['hosts', 'foo.api.test'], ['hosts', 'bar.api.test']] : [['hosts[1]', 'foo.api.test'], ['hosts[2]', 'bar.api.test']]) as [string, string][],
        ['paths', '/foo'],
        ['service.name', `svc-${kind}`], ['strip_path', 'false'], ['regex_priority', '-2'],
      ]),
    });
    t.is(route.status, 201, kind);
    t.like(await route.json(), { methods: ['GET', 'POST'], hosts: ['foo.api.test', 'bar.api.test'], paths: ['/foo'], strip_path: false, regex_priority: -2 }, kind);
  }
});

test('multipart: every part is read, however many; a repeated name keeps its last (arguments.lua:543-551, kong-lapis 1.16.0.1 nginx.lua parse_multipart)', async (t) => {
  // Kong takes the parts lapis parsed, which counts none (max_post_args bounds a form, arguments.lua:510-513)
  const parts: [string, string][] = [['username', 'many-parts']];
  for (let index = 0; index < 1000; index += 1) parts.push(['custom_id', `c${index}`]);
  const response = await fetch(url('/consumers'), { method: 'POST', body: multipart(parts) });
  t.is(response.status, 201);
  t.like(await response.json(), { username: 'many-parts', custom_id: 'c999' });
  const tags = await fetch(url('/consumers/many-parts'), { method: 'PATCH', body: multipart([['tags[]', 'a'], ['tags[]', 'b']]) });
  t.deepEqual(((await tags.json()) as { tags: unknown }).tags, ['b']);
  // a form's 1001 arguments are refused whole
  const form1001 = await fetch(url('/consumers'), { method: 'POST', body: form(parts.concat([['tags', 'x']])) });
  t.is(form1001.status, 400);
  t.deepEqual(await form1001.json(), { message: 'Too many arguments' });
});

test('a plugin\'s config is read by that plugin\'s schema; "" is null; a credential\'s ttl is a number', async (t) => {
  const plugin = await fetch(url('/plugins'), {
    method: 'POST',
    body: form([['name', 'rate-limiting'], ['config.minute', '5'], ['config.hour', '0x10'], ['config.policy', 'local'], ['config.fault_tolerant', 'false'], ['instance_name', '']]),
  });
  t.is(plugin.status, 201);
  t.like(await plugin.json(), { instance_name: null, config: { minute: 5, hour: 16, policy: 'local', fault_tolerant: false } });
  await f.admin('/consumers', { method: 'POST', json: { username: 'form-kim', custom_id: 'ext' } });
  const cleared = await fetch(url('/consumers/form-kim'), { method: 'PATCH', body: multipart([['custom_id', '']]) });
  t.like(await cleared.json(), { username: 'form-kim', custom_id: null });
  const key = await fetch(url('/consumers/form-kim/key-auth'), { method: 'POST', body: form([['key', 'form-kim-key'], ['ttl', '3600']]) });
  t.is(key.status, 201);
  t.is(((await key.json()) as { ttl: number }).ttl, 3600);
});

test('a form or multipart PATCH of a plugin without its name reads config by the stored plugin\'s schema, nested and by instance_name too (kong/api/routes/plugins.lua:73-110, 118-175)', async (t) => {
  await f.admin('/services', { method: 'POST', json: { name: 'patch-scope', url: 'http://127.0.0.1:9' } });
  await f.admin('/services/patch-scope/routes', { method: 'POST', json: { name: 'patch-scope', paths: ['/patch-scope'] } });
  await f.admin('/consumers', { method: 'POST', json: { username: 'patch-scope' } });
  const scopes = ['services', 'routes', 'consumers'];
  for (const [index, scope] of scopes.entries()) {
    const created = await f.admin(`/${scope}/patch-scope/plugins`, { method: 'POST', json: { name: 'rate-limiting', instance_name: `rl-${scope}`, config: { minute: 5 } } });
    t.is(created.status, 201, scope);
    const paths = [`/plugins/${created.body.id}`, `/${scope}/patch-scope/plugins/${created.body.id}`, `/plugins/rl-${scope}`, `/${scope}/patch-scope/plugins/rl-${scope}`];
    for (const [at, path] of paths.entries()) {
      const minute = String(10 * (index + 1) + at);
      const encode = at % 2 === 0 ? form : multipart;
      const response = await fetch(url(path), { method: 'PATCH', body: encode([['config.minute', minute], ['config.fault_tolerant', 'false']]) });
      const body = (await response.json()) as { config: Record<string, unknown> };
      t.is(response.status, 200, `${path}: ${JSON.stringify(body)}`);
      t.like(body.config, { minute: Number(minute), fault_tolerant: false, policy: 'local' }, path);
    }
  }
  const missing = await fetch(url('/plugins/0b5c3c1e-7f3a-4a7e-9d55-2f1d3c4b5a69'), { method: 'PATCH', body: form([['config.minute', '1']]) });
  t.deepEqual([missing.status, await missing.json()], [404, { message: 'Not found' }]);
});

test('text where a number goes stays text and is refused; JSON is taken as sent', async (t) => {
  const word = await fetch(url('/services'), { method: 'POST', body: form([['host', 'x.test'], ['port', 'eighty']]) });
  t.is(word.status, 400);
  t.deepEqual(((await word.json()) as { fields: unknown }).fields, { port: 'expected an integer' });
  const json = await f.admin('/services', { method: 'POST', json: { host: 'x.test', port: '8080' } });
  t.is(json.status, 400);
  t.deepEqual(json.body.fields, { port: 'expected an integer' });
});

test('a certificate\'s PEM may come as a multipart file part: its content is the value', async (t) => {
  const data = new FormData();
  data.append('cert', new Blob(['not a pem'], { type: 'application/x-pem-file' }), 'cert.pem');
  data.append('key', new Blob(['not a key'], { type: 'application/x-pem-file' }), 'key.pem');
  const response = await fetch(url('/certificates'), { method: 'POST', body: data });
  t.is(response.status, 400);
  // the parts were read as the fields' values: the PEM's own error, not a missing field
  t.regex(JSON.stringify(await response.json()), /invalid certificate.*invalid key/);
});

test("GET /status: memory in the unit and scale asked, 400 on a unit Kong refuses (02-kong_routes_spec.lua:369-428)", async (t) => {
  const memory = async (query: string) => ((await (await fetch(url(`/status${query}`))).json()) as { memory: { workers_lua_vms: { http_allocated_gc: unknown }[] } }).memory;
  t.regex(String((await memory('')).workers_lua_vms[0]!.http_allocated_gc), /^\d+\.\d{2} MiB$/);
  t.regex(String((await memory('?unit=k')).workers_lua_vms[0]!.http_allocated_gc), /^\d+\.\d{2} KiB$/);
  t.regex(String((await memory('?scale=3')).workers_lua_vms[0]!.http_allocated_gc), /^\d+\.\d{3} MiB$/);
  t.is(typeof (await memory('?unit=b')).workers_lua_vms[0]!.http_allocated_gc, 'number');
  const refused = await fetch(url('/status?unit=V'));
  t.is(refused.status, 400);
  // kong/tools/string.lua:150, through health.lua's pcall
  t.deepEqual(await refused.json(), { message: "invalid unit 'V' (expected 'k/K', 'm/M', or 'g/G')" });
});

type RawResponse = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** A request fetch() will not send (TRACE): status, headers and body as the server answered. */
function rawRequest(url: string, method: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    request(url, { method }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

test('TRACE is nginx\'s own 405 page, before any Lua: no CORS, no latency header (ngx_http_request.c "client sent TRACE method")', async (t) => {
  for (const path of ['/', '/consumers', '/non-existing']) {
    const response = await rawRequest(url(path), 'TRACE');
    t.is(response.status, 405, path);
    t.regex(response.body, /<title>405 Not Allowed<\/title>[\s\S]*<center>openresty<\/center>/, path);
    t.is(response.headers['access-control-allow-origin'], undefined, path);
    t.is(response.headers['x-kong-admin-latency'], undefined, path);
  }
});

test('the route with the fewest parameters takes the path whatever the method (lapis/router.lua route_precedence): GET /schemas/plugins/validate and PATCH /plugins/enabled are 405', async (t) => {
  // lapis matches the path alone, routes without parameters before those with; respond_to then
  // has no handler for the method (kong.lua:198-201 POST only; plugins.lua:139-149 GET only)
  for (const [method, path] of [['GET', '/schemas/plugins/validate'], ['PATCH', '/plugins/enabled'], ['DELETE', '/plugins/enabled']] as const) {
    const response = await fetch(url(path), { method });
    t.is(response.status, 405, `${method} ${path}`);
    t.deepEqual(await response.json(), { message: 'Method not allowed' }, `${method} ${path}`);
  }
  // the route with a parameter still serves the names it does not shadow
  t.is((await fetch(url('/schemas/plugins/key-auth'))).status, 200);
});

test('a method a known path does not take, one lapis has no name for too, is 405 Method not allowed without Allow; an unknown path 404 (api_helpers.lua:548-556)', async (t) => {
  for (const method of ['PUT', 'PROPFIND', 'PURGE']) {
    const response = await fetch(url('/consumers'), { method });
    t.is(response.status, 405, method);
    t.deepEqual(await response.json(), { message: 'Method not allowed' }, method);
    t.is(response.headers.get('allow'), null, method);
  }
  const unknown = await fetch(url('/non-existing'), { method: 'PROPFIND' });
  t.is(unknown.status, 404);
  t.deepEqual(await unknown.json(), { message: 'Not found' });
});

test('a kept-alive answer says keep-alive without a Keep-Alive header, as nginx does (nginx_kong.lua:411-453 sets no keepalive_timeout)', async (t) => {
  const kept = await sendRaw(url(''), 'GET /status HTTP/1.1\r\nHost: kong\r\n\r\n');
  t.is(kept.status, 200);
  t.is(kept.headers.connection, 'keep-alive');
  t.is(kept.headers['keep-alive'], undefined, 'no timeout hint: a client keeps its own, shorter than 75 s');
  for (const request of ['GET /status HTTP/1.1\r\nHost: kong\r\nConnection: close\r\n\r\n', 'GET /status HTTP/1.0\r\n\r\n']) {
    const closed = await sendRaw(url(''), request);
    t.is(closed.status, 200);
    t.is(closed.headers.connection, 'close', request);
    await closed.closedAfter;
  }
});

test('a method Node\'s parser does not know is 405 Method not allowed on a known path, 404 on an unknown one, as lapis answers any method nginx takes (02-kong_routes_spec.lua:103-117)', async (t) => {
  for (const [line, status, body] of [
    ['GEEEET / HTTP/1.1', 405, { message: 'Method not allowed' }],
    ['FOO /services?size=1 HTTP/1.1', 405, { message: 'Method not allowed' }],
    ['FOO /services/some-service/routes HTTP/1.1', 405, { message: 'Method not allowed' }],
    ['GEEEET /non-existing HTTP/1.1', 404, { message: 'Not found' }],
  ] as const) {
    const response = await sendRaw(url(''), `${line}\r\nHost: kong\r\nOrigin: http://example.test\r\n\r\n`);
    t.is(response.status, status, line);
    t.deepEqual(JSON.parse(response.body), body, line);
    t.is(response.headers['content-type'], 'application/json; charset=utf-8', line);
    t.is(response.headers.server, 'kong/3.9.3', line);
    t.is(response.headers['access-control-allow-origin'], 'http://example.test', line);
    t.is(response.headers.allow, undefined, line);
  }
});

test('a pipelined request with an unknown method is answered after the one before it (02-kong_routes_spec.lua:103-117)', async (t) => {
  const connection = await RawConnection.open(url(''));
  await connection.write('GET /status HTTP/1.1\r\nHost: kong\r\n\r\nGEEEET / HTTP/1.1\r\nHost: kong\r\n\r\n');
  t.is((await connection.next()).status, 200);
  const refused = await connection.next();
  t.is(refused.status, 405);
  t.deepEqual(JSON.parse(refused.body), { message: 'Method not allowed' });
  await connection.waitClosed();
  // after a request with a body, which ends with no line break
  const afterBody = await RawConnection.open(url(''));
  const body = '{"name":"piped-body","url":"http://a.test"}';
  await afterBody.write(
    `POST /services HTTP/1.1\r\nHost: kong\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
      'FOO /services HTTP/1.1\r\nHost: kong\r\n\r\n',
  );
  t.is((await afterBody.next()).status, 201);
  const refusedAfterBody = await afterBody.next();
  t.deepEqual([refusedAfterBody.status, JSON.parse(refusedAfterBody.body)], [405, { message: 'Method not allowed' }]);
  await afterBody.waitClosed();
});

test('pipelined requests run one after the other, as nginx reads the next once the previous is answered (ngx_http_set_keepalive)', async (t) => {
  const connection = await RawConnection.open(url(''));
  const body = '{"url":"http://a.test"}';
  await connection.write(
    `PUT /services/piped HTTP/1.1\r\nHost: kong\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
      'DELETE /services/piped HTTP/1.1\r\nHost: kong\r\n\r\n' +
      'GET /services/piped HTTP/1.1\r\nHost: kong\r\nConnection: close\r\n\r\n',
  );
  t.deepEqual([(await connection.next()).status, (await connection.next()).status, (await connection.next()).status], [200, 204, 404]);
  await connection.waitClosed();
  t.is((await sendRaw(url(''), 'GET /services/piped HTTP/1.1\r\nHost: kong\r\n\r\n')).status, 404, 'the DELETE ran after the PUT');
});

test('a request nginx cannot parse is its own 400 page, never an empty answer (ngx_http_parse.c; no error_page in the Admin API server, nginx_kong.lua:411-453)', async (t) => {
  for (const request of [
    'geeeet / HTTP/1.1\r\nHost: kong\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: kong\r\nX-Bad: a\u0001b\r\n\r\n',
    'POST /services HTTP/1.1\r\nHost: kong\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  ]) {
    const response = await sendRaw(url(''), request);
    t.is(response.status, 400, request);
    t.regex(response.body, /<title>400 Bad Request<\/title>[\s\S]*<center>openresty<\/center>/, request);
    t.is(response.headers['content-type'], 'text/html', request);
    t.is(response.headers.connection, 'close', request);
  }
  const large = await sendRaw(url(''), `GET / HTTP/1.1\r\nHost: kong\r\nX-Large: ${'a'.repeat(20_000)}\r\n\r\n`);
  t.is(large.status, 400);
  t.is(large.statusLine, 'HTTP/1.1 400 Bad Request', "a 494's status line is 400's (ngx_http_special_response.c)");
  t.regex(large.body, /<title>400 Request Header Or Cookie Too Large<\/title>/);
});
