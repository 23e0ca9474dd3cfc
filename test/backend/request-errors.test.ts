import test from 'ava';
import { ErrorCode } from '../../backend/src/index.ts';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { request, startTestBackend, type TestBackend } from '../helpers/backend.ts';
import { contractProblems, documentedErrorCodes } from '../helpers/openapi-contract.ts';

let backend: TestBackend;

/** node:http, which sends any method token as is (fetch refuses TRACE and friends). */
function rawRequest(
  base: string,
  method: string,
  path: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

test.before(async () => {
  backend = await startTestBackend();
});
test.after.always(async () => {
  await backend?.dispose();
});

test('malformed JSON answers 400 invalid_json', async (t) => {
  const response = await request(`${backend.url}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name": "Rex",',
  });
  t.is(response.status, 400);
  t.is(response.body.code, 'invalid_json');
});

test('a JSON scalar body answers 400 invalid_json', async (t) => {
  const response = await request(`${backend.url}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '"Rex"',
  });
  t.is(response.status, 400);
  t.is(response.body.code, 'invalid_json');
});

test('a missing body answers 400', async (t) => {
  const response = await request(`${backend.url}/pets`, { method: 'POST' });
  t.is(response.status, 400);
  t.is(response.body.code, 'validation_failed');
});

for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
  test(`a ${contentType} body answers 415 unsupported_media_type`, async (t) => {
    const response = await request(`${backend.url}/pets`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: 'name=Rex&categoryId=1',
    });
    t.is(response.status, 415);
    t.is(response.body.code, 'unsupported_media_type');
    t.deepEqual(contractProblems('POST', '/pets', response), []);
  });
}

test('a JSON body with a charset parameter is accepted', async (t) => {
  const response = await request(`${backend.url}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  });
  t.is(response.status, 201);
});

test('a body over 64 KiB answers 413 payload_too_large', async (t) => {
  const response = await request(`${backend.url}/pets`, {
    method: 'POST',
    json: { name: 'Rex', categoryId: 1, padding: 'x'.repeat(70 * 1024) },
  });
  t.is(response.status, 413);
  t.is(response.body.code, 'payload_too_large');
  t.deepEqual(contractProblems('POST', '/pets', response), []);
});

test('an unknown path answers 404 not_found in the Error shape', async (t) => {
  const response = await request(`${backend.url}/unicorns`);
  t.is(response.status, 404);
  t.deepEqual(response.body, { code: 'not_found', message: 'No resource at GET /unicorns.', status: 404 });
});

test('a long unknown path is described by its length in the 404 and 405 messages, not echoed', async (t) => {
  const long = `/${'a'.repeat(6000)}`;
  const unknown = await request(`${backend.url}${long}`);
  t.deepEqual(unknown.body, { code: 'not_found', message: 'No resource at GET a path of 6001 characters.', status: 404 });
  const item = await request(`${backend.url}/pets/${'1'.repeat(200)}`, { method: 'DELETE' });
  t.is(item.status, 405);
  t.is(item.body.message, 'Method DELETE is not allowed on a path of 206 characters.');
});

// Behind the gateway our path is not the client's: /v1/nope reaches us as /nope. The messages name
// the path the client called, rebuilt as the Link header's is (X-Forwarded-Path, else the prefix).
test('404 and 405 messages name the public path behind the gateway, ours when called directly', async (t) => {
  const cases: Array<[string, string, Record<string, string>, string]> = [
    ['GET', '/nope', { 'X-Forwarded-Prefix': '/v1', 'X-Forwarded-Path': '/v1/nope' }, 'No resource at GET /v1/nope.'],
    ['GET', '/nope', { 'X-Forwarded-Prefix': '/v1' }, 'No resource at GET /v1/nope.'],
    ['DELETE', '/pets/1', { 'X-Forwarded-Prefix': '/v1', 'X-Forwarded-Path': '/v1/pets/1' }, 'Method DELETE is not allowed on /v1/pets/1.'],
    ['PUT', '/store/orders/1', { 'X-Forwarded-Prefix': '/v1', 'X-Forwarded-Path': '/v1//store/orders/1' }, 'Method PUT is not allowed on /v1//store/orders/1.'],
    ['DELETE', '/pets/1', { 'X-Forwarded-Prefix': 'https://evil.example/' }, 'Method DELETE is not allowed on /pets/1.'],
    ['DELETE', '/pets/1', {}, 'Method DELETE is not allowed on /pets/1.'],
  ];
  for (const [method, path, headers, message] of cases) {
    const response = await request(`${backend.url}${path}`, { method, headers });
    t.is(response.body.message, message, `${method} ${path} ${JSON.stringify(headers)}`);
  }
});

test('a wrong method answers 405 with Allow', async (t) => {
  const response = await request(`${backend.url}/pets`, { method: 'DELETE' });
  t.is(response.status, 405);
  t.is(response.body.code, 'method_not_allowed');
  t.is(response.body.status, 405);
  t.is(response.headers.get('allow'), 'HEAD, GET, POST');
});

test('a wrong method on an item path answers 405 with its own Allow', async (t) => {
  const response = await request(`${backend.url}/pets/1`, { method: 'PUT', json: {} });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'HEAD, GET');
});

// @koa/router's allowedMethods answers 501 for any method outside the router's `methods` list
// (its default holds seven); the API serves a path or it does not, so every other method is a 405.
const UNSERVED_METHODS = ['TRACE', 'PURGE', 'PROPFIND', 'SEARCH', 'QUERY', 'LINK', 'UNLOCK', 'REPORT', 'MKCOL', 'COPY'];
for (const [path, allow] of [['/pets', 'HEAD, GET, POST'], ['/pets/1', 'HEAD, GET'], ['/store/orders/1/approve', 'POST']] as const) {
  test(`methods the API does not serve on ${path} answer 405 with Allow, never 5xx`, async (t) => {
    for (const method of UNSERVED_METHODS) {
      const response = await rawRequest(backend.url, method, path);
      t.is(response.status, 405, method);
      t.is(response.headers.allow, allow, method);
      t.deepEqual(JSON.parse(response.text), { code: 'method_not_allowed', message: `Method ${method} is not allowed on ${path}.`, status: 405 }, method);
    }
  });
}

test('an unserved method on an unknown path answers 404, and OPTIONS lists what a path allows', async (t) => {
  t.is((await rawRequest(backend.url, 'TRACE', '/unicorns')).status, 404);
  const options = await rawRequest(backend.url, 'OPTIONS', '/store/orders');
  t.is(options.status, 200);
  t.is(options.headers.allow, 'HEAD, GET, POST');
});

const postRaw = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
  request(`${backend.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });

const NESTED = '['.repeat(4000) + ']'.repeat(4000); // 8 KB, as in issue 13
for (const [path, fields] of [['/pets', ['name', 'categoryId', 'status', 'extra']], ['/store/orders', ['petId', 'extra']]] as const) {
  test(`4,000 nested arrays in any field of POST ${path} answer 400, not a stack overflow`, async (t) => {
    for (const field of fields) {
      const response = await postRaw(path, `{"${field}":${NESTED}}`);
      t.is(response.status, 400, field);
      t.deepEqual(response.body, { code: 'invalid_json', message: 'Request body is not a valid JSON object: it nests deeper than 32 levels.', status: 400 });
    }
  });

  test(`values superstruct cannot print answer 400 on POST ${path}`, async (t) => {
    const hostile = [
      '{"FIELD":{"toString":1}}', // `${value}` throws on an own non-function toString
      '{"FIELD":{"valueOf":{},"toString":{}}}',
      '{"FIELD":[[[[[[[[[[1]]]]]]]]]]}',
      '{"FIELD":[{"toString":null}]}',
    ];
    for (const field of fields) {
      for (const template of hostile) {
        const response = await postRaw(path, template.replace('FIELD', field));
        t.is(response.status, 400, template);
        t.is(response.body.code, 'validation_failed', template);
      }
    }
  });
}

test('validation messages never echo long or unprintable input', async (t) => {
  const response = await postRaw('/pets', JSON.stringify({ name: 'Rex', categoryId: 1, status: 'x'.repeat(5000), ['k'.repeat(300)]: 1 }));
  t.is(response.status, 400);
  t.deepEqual(response.body, {
    code: 'validation_failed',
    message: 'Invalid pet: unknown field(s): (a field name of 300 characters); status: Expected one of `"available","pending","sold"`, but received a string of 5000 UTF-16 units.',
    status: 400,
  });
  const control = await postRaw('/pets', JSON.stringify({ name: 'Rex', categoryId: 'a\u0000b' }));
  t.is(control.body.message, 'Invalid pet: categoryId: Expected an integer, but received a string of 3 UTF-16 units.');
});

test('a lone surrogate answers 400 invalid_json; a surrogate pair is kept exactly', async (t) => {
  for (const escaped of ['\\ud800', '\\udfff', 'a\\ud83d', '\\ude00b']) {
    const response = await postRaw('/pets', `{"name":"${escaped}","categoryId":1}`);
    t.is(response.status, 400, escaped);
    t.is(response.body.code, 'invalid_json', escaped);
  }
  const key = await postRaw('/pets', '{"name":"Rex","categoryId":1,"\\ud800":1}');
  t.is(key.body.code, 'invalid_json');

  const pair = await postRaw('/pets', '{"name":"Rex \\ud83d\\ude00","categoryId":1}');
  t.is(pair.status, 201);
  t.is(pair.body.name, 'Rex \u{1F600}');
  t.is((await request(`${backend.url}/pets/${pair.body.id}`)).body.name, 'Rex \u{1F600}');
});

test('a name holding U+0000 answers 400 validation_failed on SQLite as on PostgreSQL (which cannot store it)', async (t) => {
  const response = await postRaw('/pets', '{"name":"Rex\\u0000","categoryId":1}');
  t.is(response.status, 400);
  t.deepEqual(response.body, { code: 'validation_failed', message: 'Invalid pet: name: Expected a string without U+0000 (NUL).', status: 400 });
  t.deepEqual(contractProblems('POST', '/pets', response), []);
});

test('a body that is not UTF-8 answers 400 invalid_json instead of being stored with U+FFFD', async (t) => {
  // A lone surrogate written as CESU-8 bytes (ED A0 80), and a Latin-1 byte.
  for (const bytes of [[0xed, 0xa0, 0x80], [0xe9]]) {
    const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('","categoryId":1}')]);
    const response = await postRaw('/pets', body);
    t.is(response.status, 400);
    t.deepEqual(response.body, { code: 'invalid_json', message: 'Request body is not a valid JSON object: it is not valid UTF-8.', status: 400 });
  }
});

test('a compressed body or a charset other than UTF-8 answers 415', async (t) => {
  const { gzipSync } = await import('node:zlib');
  const gzip = await postRaw('/pets', gzipSync(JSON.stringify({ name: 'Rex', categoryId: 1 })), { 'content-encoding': 'gzip' });
  t.is(gzip.status, 415);
  t.is(gzip.body.code, 'unsupported_media_type');
  const latin1 = await postRaw('/pets', JSON.stringify({ name: 'Rex', categoryId: 1 }), { 'content-type': 'application/json; charset=iso-8859-1' });
  t.is(latin1.status, 415);
});

test('a "__proto__" field is refused by name like any unknown field', async (t) => {
  for (const value of ['{"a":1}', '1', 'null']) {
    const response = await postRaw('/pets', `{"name":"Rex","categoryId":1,"__proto__":${value}}`);
    t.is(response.status, 400, value);
    t.is(response.body.message, 'Invalid pet: unknown field(s): __proto__.', value);
  }
});

test('a JSON array body answers 400 invalid_json, as the contract says of a body that is not an object', async (t) => {
  for (const [path, body] of [['/store/orders', '[{"petId":1}]'], ['/pets', '[]'], ['/pets', '[{"name":"Rex","categoryId":1}]']] as const) {
    const response = await postRaw(path, body);
    t.deepEqual(response.body, { code: 'invalid_json', message: 'Request body is not a valid JSON object: it is a JSON array.', status: 400 }, `${path} ${body}`);
  }
});

test('repeated or odd query parameters answer 400, never 5xx', async (t) => {
  for (const query of ['limit=1&limit=2', 'status=a&status=b', 'cursor=a&cursor=b', 'limit=%ZZ', 'toString=1', '__proto__=1', 'status=%E0']) {
    const pets = await request(`${backend.url}/pets?${query}`);
    const orders = await request(`${backend.url}/store/orders?${query}`);
    t.true(pets.status === 400 || pets.status === 200, `${query}: ${pets.status}`);
    t.true(orders.status === 400 || orders.status === 200, `${query}: ${orders.status}`);
  }
  t.is((await request(`${backend.url}/pets?limit=1&limit=2`)).body.message, 'Invalid query: limit: Expected an integer from 1 to 100, but received an array.');
});

test('an unexpected failure answers 500 internal_error without internals, and is logged', async (t) => {
  const { createApp, openDatabase } = await import('../../backend/src/index.ts');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { createServer } = await import('node:http');
  const dataDir = mkdtempSync(`${tmpdir()}/animal-store-broken-`);
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const db = await openDatabase({ dataDir });
  await db.destroy(); // every query now fails
  const logged: unknown[] = [];
  const server = createServer(createApp({ db, logError: (error) => logged.push(error) }).app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const response = await request(`http://127.0.0.1:${port}/pets`);
  server.close();
  t.is(response.status, 500);
  t.deepEqual(response.body, { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 });
  t.is(logged.length, 1);
});

/** Writes `raw` on a new connection and returns everything the backend answers before closing it. */
function rawExchange(base: string, raw: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(raw));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

test("requests Node's HTTP parser rejects get the Error shape, then the connection closes", async (t) => {
  const cases: Array<[string, number, string]> = [
    ['GET /pets HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n', 400, 'bad_request'],
    ['POST /pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, 'bad_request'],
    ['POST /pets HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', 400, 'bad_request'],
    [`GET /pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`, 431, 'request_headers_too_large'],
  ];
  for (const [raw, status, code] of cases) {
    const answer = await rawExchange(backend.url, raw);
    const [head, body] = answer.split('\r\n\r\n');
    t.true(head!.startsWith(`HTTP/1.1 ${status} `), head);
    t.regex(head!, /content-type: application\/json/i);
    t.is(JSON.parse(body!).code, code);
    t.is(JSON.parse(body!).status, status);
  }
});

// Node's parser knows a fixed list of methods and refuses the others before Koa sees them; RFC 9110
// lets any token be a method, and the API answers one as any method a path does not serve.
test("a method Node's parser does not know answers 405 with Allow where a route is, 404 where none is", async (t) => {
  const cases: Array<[string, number, string | undefined]> = [
    ['FOO /pets?limit=1', 405, 'HEAD, GET, POST'],
    ['BREW /pets/1', 405, 'HEAD, GET'],
    ['FOO_BAR /store/orders/1/approve', 405, 'POST'],
    ['GETX /unicorns', 404, undefined],
  ];
  for (const [line, status, allow] of cases) {
    const [method, target] = line.split(' ') as [string, string];
    const path = target.replace(/\?.*/, '');
    const answer = await rawExchange(backend.url, `${line} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const [head, body] = answer.split('\r\n\r\n') as [string, string];
    t.true(head.startsWith(`HTTP/1.1 ${status} `), head);
    t.is(/^allow: (.*)$/im.exec(head)?.[1], allow, line);
    t.deepEqual(
      JSON.parse(body),
      status === 405
        ? { code: 'method_not_allowed', message: `Method ${method} is not allowed on ${path}.`, status }
        : { code: 'not_found', message: `No resource at ${method} ${path}.`, status },
    );
    t.is(/^x-api-stability: (.*)$/im.exec(head)?.[1], path.startsWith('/store/orders') ? 'experimental' : undefined, line);
  }
  // pipelined after a request already answered: the method and path are the second request's
  const pipelined = await rawExchange(backend.url, 'GET /pets?limit=1 HTTP/1.1\r\nHost: x\r\n\r\nFOO /store/orders HTTP/1.1\r\nHost: x\r\n\r\n');
  t.regex(pipelined, /HTTP\/1\.1 405 Method Not Allowed\r\n[^]*Allow: HEAD, GET, POST\r\n[^]*"Method FOO is not allowed on \/store\/orders\."/);
  // behind the gateway: the path the client called, from the forwarded headers Node never parsed
  const forwarded = await rawExchange(backend.url, 'FOO /pets/1 HTTP/1.1\r\nHost: x\r\nx-forwarded-prefix: /v1\r\nX-Forwarded-Path: /v1/pets/1\r\n\r\n');
  t.regex(forwarded, /"Method FOO is not allowed on \/v1\/pets\/1\."/);
  const prefixOnly = await rawExchange(backend.url, 'GETX /unicorns HTTP/1.1\r\nX-Forwarded-Prefix: /v1\r\n\r\n');
  t.regex(prefixOnly, /"No resource at GETX \/v1\/unicorns\."/);
  // not a method at all: still the parser's 400
  t.true((await rawExchange(backend.url, 'F(O /pets HTTP/1.1\r\nHost: x\r\n\r\n')).startsWith('HTTP/1.1 400 '));
});

test('paths are case-sensitive, as the gateway routes them: /PETS/1 is no pet', async (t) => {
  const created = await request(`${backend.url}/pets`, { method: 'POST', json: { name: 'Case', categoryId: 1 } });
  for (const path of [`/PETS/${created.body.id}`, '/Pets', '/store/ORDERS']) {
    const response = await request(`${backend.url}${path}`);
    t.is(response.status, 404, path);
    t.is(response.body.code, 'not_found', path);
  }
  t.is((await request(`${backend.url}/pets/${created.body.id}`)).status, 200);
});

test('every response of the store-orders area carries X-API-Stability, its errors included', async (t) => {
  const cases: Array<[string, string, number]> = [
    ['GET', '/store/orders', 200],
    ['DELETE', '/store/orders', 405],
    ['OPTIONS', '/store/orders', 200],
    ['GET', '/store/orders/1/x', 404],
    ['GET', '/store/orders/abc', 400],
    ['PURGE', '/store/orders/1', 405],
  ];
  for (const [method, path, status] of cases) {
    const response = await rawRequest(backend.url, method, path);
    t.is(response.status, status, `${method} ${path}`);
    t.is(response.headers['x-api-stability'], 'experimental', `${method} ${path}`);
  }
  t.is((await rawRequest(backend.url, 'DELETE', '/pets')).headers['x-api-stability'], undefined);
  t.is((await rawRequest(backend.url, 'GET', '/store/ordersx')).headers['x-api-stability'], undefined);
});

test('every error code the backend can emit is listed in the OpenAPI document', (t) => {
  for (const code of Object.values(ErrorCode)) t.true(documentedErrorCodes.has(code), code);
});
