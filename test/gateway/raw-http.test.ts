import test, { type ExecutionContext } from 'ava';
import { startStack, type TestStack } from '../helpers/stack.ts';
import { RawConnection, rawRequest, type RawResponse } from '../helpers/raw-http.ts';

// What a fuzzer cannot send, through the real kong.yml and backend, over raw sockets, answered
// by nginx itself. Every case gets an answer, never a 5xx. What nginx rejects before Kong's
// phases (kong/templates/nginx_kong.lua, 3.9.3: error_page 400 404 405 408 411 412 413 414 417
// and 494 go to Kong.handle_error) gets a closed connection, and only the global plugins'
// header_filter and body_filter run on it, as Kong runs them on "Nginx-produced client errors"
// (spec/02-integration/05-proxy/04-plugins_triggering_spec.lua:1018). No route matched, so no
// team's plugin runs: our plugins are on our services (a Kong shared with other teams,
// docs/shared-kong.md), and the answer is Kong's own error (kong/tools/http.lua's text format,
// since these requests carry no Accept), without X-RateLimit-*. Requests nginx accepts run every
// plugin: Error shape and X-RateLimit-* on whatever Kong itself answers.
let stack: TestStack;
let key: string;

test.before(async () => {
  stack = await startStack();
  key = await stack.provision('raw-http', { minute: 100_000, day: 1_000_000 });
});
test.after.always(async () => {
  await stack?.dispose();
});

const url = () => stack.gateway.proxyUrl;

/** An answer nginx gave before Kong's phases: Kong's own error, Kong's headers, no rate limit, closed. */
function assertNginxRefusal(t: Pick<ExecutionContext, 'is' | 'regex' | 'deepEqual'>, response: RawResponse, status: number, message: string) {
  t.is(response.status, status);
  t.is(response.headers['content-type'], 'text/plain; charset=utf-8');
  t.regex(response.body, new RegExp(`^${message}\\b`));
  t.regex(response.headers['x-kong-request-id'] ?? '', /^[0-9a-f]{32}$/);
  t.is(response.headers['x-ratelimit-limit'], undefined);
  t.is(response.headers.connection, 'close');
}

/** The edge plugin's Error shape with the rate-limit headers: Kong's plugins ran. */
function assertErrorShape(t: Pick<ExecutionContext, 'is' | 'truthy' | 'deepEqual'>, response: RawResponse, status: number, code: string) {
  t.is(response.status, status);
  const body = JSON.parse(response.body) as { code: string; status: number };
  t.is(body.code, code);
  t.is(body.status, status);
  t.truthy(response.headers['x-ratelimit-limit'], 'X-RateLimit-Limit');
  t.truthy(response.headers['x-ratelimit-remaining'], 'X-RateLimit-Remaining');
  t.truthy(response.headers['x-ratelimit-reset'], 'X-RateLimit-Reset');
}

const BAD_REQUESTS: Array<[string, string]> = [
  ['a control byte in the URL', 'GET /v1/pe\x01ts HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['Transfer-Encoding with Content-Length', 'POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n'],
  ['two different Content-Length values', 'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd'],
  ['HTTP/1.1 without Host', 'GET /v1/pets HTTP/1.1\r\n\r\n'],
  ['a lowercase method', 'get /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['a folded header', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  b\r\n\r\n'],
  ['a space before the colon', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n'],
  ['an asterisk target', 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['a target that is no URI', 'GET pets HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['garbage', 'NOT HTTP AT ALL\r\n\r\n'],
  // nginx parses the CONNECT method but not an authority-form target (ngx_http_parse_request_line).
  ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
];

for (const [name, request] of BAD_REQUESTS) {
  test(`400 in the Error shape and a closed connection: ${name}`, async (t) => {
    const response = await rawRequest(url(), request);
    assertNginxRefusal(t, response, 400, 'Bad request');
    await response.closedAfter;
  });
}

// nginx checks header names and line endings, not the bytes of a value (ngx_http_parse_header_line
// refuses only NUL, CR and LF there), and takes any method token and bare LF line endings: Kong's
// phases run, as they do on Kong.
const ACCEPTED: Array<[string, string]> = [
  ['a control byte in a header value', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n'],
  ['a method nginx does not know (FOO)', 'FOO /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['bare LF line endings', 'GET /v1/pets HTTP/1.1\nHost: x\n\n'],
  ['HTTP/1.0 without Host', 'GET /v1/pets HTTP/1.0\r\n\r\n'],
];

for (const [name, request] of ACCEPTED) {
  test(`nginx accepts ${name}: Kong's plugins answer, Error shape and X-RateLimit-*`, async (t) => {
    assertErrorShape(t, await rawRequest(url(), request), 401, 'missing_api_key');
  });
}

test('a bad chunk size in a body being proxied: 400, never a 5xx', async (t) => {
  const response = await rawRequest(
    url(),
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n`,
  );
  t.true(response.status === 400, `got ${response.status}: ${response.body}`);
  await response.closedAfter;
});

// nginx's large_client_header_buffers default (4 8k; Kong's template sets none). Nothing this
// large reaches the backend.
test('a 16,000-byte query: 414 from the gateway (request line over one 8k buffer)', async (t) => {
  const response = await rawRequest(url(), `GET /v1/pets?q=${'a'.repeat(16_000)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  assertNginxRefusal(t, response, 414, 'URI too long');
});

test('a URL over the four buffers (40 kB): 414', async (t) => {
  const response = await rawRequest(url(), `GET /v1/pets?q=${'a'.repeat(40_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assertNginxRefusal(t, response, 414, 'URI too long');
});

// nginx's 494 becomes Kong's 400 "Request header or cookie too large" (kong/error_handlers.lua).
test('a 16,000-byte header: 400 (nginx 494, kong/error_handlers.lua)', async (t) => {
  const response = await rawRequest(url(), `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(16_000)}\r\n\r\n`);
  assertNginxRefusal(t, response, 400, 'Request header or cookie too large');
});

test('headers over the four 8k buffers in total: 400', async (t) => {
  const headers = Array.from({ length: 5 }, (_, i) => `X-H${i}: ${'h'.repeat(7_000)}\r\n`).join('');
  const response = await rawRequest(url(), `GET /v1/pets HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
  assertNginxRefusal(t, response, 400, 'Request header or cookie too large');
});

test('headers within the limits (a 7 kB header) pass to the plugins and the backend', async (t) => {
  const response = await rawRequest(url(), `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Big: ${'b'.repeat(7_000)}\r\n\r\n`);
  t.is(response.status, 200);
});

// nginx answers TRACE 405 before any phase (ngx_http_process_request_header); Kong's spec expects
// the same (spec/02-integration/05-proxy/13-error_handlers_spec.lua:43).
test('TRACE: 405 as nginx answers it', async (t) => {
  assertNginxRefusal(t, await rawRequest(url(), 'TRACE /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n'), 405, 'Method not allowed');
});

test('an absolute-form target is routed on its path, with the plugins: Error shape and X-RateLimit-*', async (t) => {
  const anonymous = await rawRequest(url(), 'GET http://example.com/v1/pets HTTP/1.1\r\nHost: x\r\n\r\n');
  assertErrorShape(t, anonymous, 401, 'missing_api_key');
  const keyed = await rawRequest(url(), `GET http://example.com/v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  t.is(keyed.status, 200);
  t.truthy(keyed.headers['x-ratelimit-limit']);
});

for (const method of ['PURGE', 'PROPFIND', 'SEARCH', 'QUERY', 'LINK', 'UNLOCK', 'REPORT']) {
  test(`${method} reaches Kong's plugins: a keyless one gets the Error shape and X-RateLimit-*`, async (t) => {
    const response = await rawRequest(url(), `${method} /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n`);
    assertErrorShape(t, response, 401, 'missing_api_key');
  });
}

test('an Expect other than 100-continue is ignored, as nginx does (ngx_http_test_expect)', async (t) => {
  const response = await rawRequest(url(), 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n');
  assertErrorShape(t, response, 401, 'missing_api_key');
});

test('Expect: 100-continue works end to end for POST and GET', async (t) => {
  const body = JSON.stringify({ name: 'Continue', categoryId: 1, status: 'available' });
  const connection = await RawConnection.open(url());
  t.teardown(() => connection.close());
  await connection.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  // The client sends its body only after `100 Continue`.
  t.is((await connection.next()).status, 100);
  await connection.write(body);
  const created = await connection.response();
  t.is(created.status, 201, created.body);
  t.is(JSON.parse(created.body).name, 'Continue');

  await connection.write(`GET /v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nExpect: 100-continue\r\n\r\n`);
  const listed = await connection.response();
  t.is(listed.status, 200, listed.body);
});

test('Expect: 100-continue with a Content-Length over the limit: 417 without 100 Continue (request-size-limiting handler.lua)', async (t) => {
  const connection = await RawConnection.open(url());
  t.teardown(() => connection.close());
  await connection.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n`,
  );
  const response = await connection.response();
  t.deepEqual(response.interim, []);
  t.is(response.status, 417);
  // what the size is, not a gateway_error: curl sends Expect: 100-continue itself for bodies over 1 MiB
  t.deepEqual(JSON.parse(response.body), {
    code: 'payload_too_large',
    status: 417,
    message: 'The request body is too large; it was refused before it was sent.',
  });
  await connection.waitClosed();
});

test('a Content-Length over 64 KiB: 413 in the Error shape before any of the body is sent', async (t) => {
  const connection = await RawConnection.open(url());
  t.teardown(() => connection.close());
  await connection.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 268435456\r\n\r\n`,
  );
  const response = await connection.response();
  t.is(response.status, 413);
  t.is(JSON.parse(response.body).code, 'payload_too_large');
  // The size check runs after rate-limiting (animal-store-body-limit, PRIORITY 901 < 910): the 413
  // carries the rate-limit headers like any answer of the gateway, and counts.
  t.is(response.headers['x-ratelimit-limit'], '100000');
  const remaining = Number(response.headers['x-ratelimit-remaining']);
  const next = await rawRequest(url(), `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  // (other tests of this file use the key at the same time: it can only be lower)
  t.true(Number(next.headers['x-ratelimit-remaining']) <= remaining - 1);
});

// The spec's Authentication 4: a missing or invalid key is 401 whatever the body. The body limit
// leaves key-auth's anonymous consumer to its request-termination's 401, which reads no body.
test('without a valid key, a Content-Length over 64 KiB is 401, not 413', async (t) => {
  for (const authorization of ['', 'Authorization: Bearer ask_not-a-key\r\n']) {
    const connection = await RawConnection.open(url());
    t.teardown(() => connection.close());
    await connection.write(`POST /v1/pets HTTP/1.1\r\nHost: x\r\n${authorization}Content-Type: application/json\r\nContent-Length: 268435456\r\n\r\n`);
    const response = await connection.response();
    t.is(response.status, 401);
    t.is(JSON.parse(response.body).code, authorization ? 'invalid_api_key' : 'missing_api_key');
    t.truthy(response.headers['x-ratelimit-limit'], 'counted, as any answer');
  }
});

// A body without Content-Length is read whole, nginx buffering what passes client_body_buffer_size
// (8k) to a temporary file, and then measured (kong/plugins/request-size-limiting/handler.lua,
// 3.9.3: get_raw_body, else the body file's size): memory stays bounded by the buffer.
test('a chunked body over 64 KiB: 413 in the Error shape once it has arrived', async (t) => {
  const connection = await RawConnection.open(url());
  t.teardown(() => connection.close());
  const chunk = `4000\r\n${'x'.repeat(0x4000)}\r\n`;
  await connection.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.repeat(5)}0\r\n\r\n`,
  );
  const response = await connection.response();
  t.is(response.status, 413);
  t.is(JSON.parse(response.body).code, 'payload_too_large');
  t.is(response.headers['x-ratelimit-limit'], '100000');
});

test('a body within the limit sent slowly, in small pieces, is proxied whole', async (t) => {
  const body = JSON.stringify({ name: 'Slowly', categoryId: 1, status: 'available' });
  const connection = await RawConnection.open(url());
  t.teardown(() => connection.close());
  await connection.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  for (const piece of body.match(/.{1,3}/g)!) {
    await connection.write(piece);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const response = await connection.response();
  t.is(response.status, 201, response.body);
});

test('pipelining: the good requests before a malformed one get their responses, in order, then the 400', async (t) => {
  const good = `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`;
  const connection = await RawConnection.open(url());
  t.teardown(() => connection.close());
  await connection.write(`${good}GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n${good}GET /v1/pe\x01ts HTTP/1.1\r\nHost: x\r\n\r\n${good}`);
  t.is((await connection.response()).status, 200);
  assertErrorShape(t, await connection.response(), 401, 'missing_api_key');
  t.is((await connection.response()).status, 200);
  assertNginxRefusal(t, await connection.response(), 400, 'Bad request');
  await connection.waitClosed();
});

test.serial('a client that goes away mid-body is logged on one info line, without a stack', async (t) => {
  const { gateway } = stack;
  const before = gateway.logs.length;
  const connection = await RawConnection.open(url());
  await connection.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`,
  );
  connection.close();
  // A later request on another connection is answered: the gateway went on.
  const after = await rawRequest(url(), `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  t.is(after.status, 200);
  const logged = gateway.logs.slice(before);
  t.false(logged.some((line) => line.includes('\n    at ')), logged.join('\n'));
  t.false(logged.some((line) => line.startsWith('err:')), logged.join('\n'));
});
