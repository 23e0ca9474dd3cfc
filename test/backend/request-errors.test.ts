import anyTest, { type TestFn } from 'ava';
import { ErrorCode } from '../../backend/src/http/errors.ts';
import { request, startTestBackend, type TestBackend } from '../helpers/backend.ts';
import { contractProblems, documentedErrorCodes } from '../helpers/openapi-contract.ts';

const test = anyTest as TestFn<{ backend: TestBackend }>;

test.before(async (t) => {
  t.context.backend = await startTestBackend();
});
test.after.always(async (t) => {
  await t.context.backend?.dispose();
});

test('malformed JSON answers 400 invalid_json', async (t) => {
  const response = await request(`${t.context.backend.url}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name": "Rex",',
  });
  t.is(response.status, 400);
  t.is(response.body.code, 'invalid_json');
});

test('a JSON scalar body answers 400 invalid_json', async (t) => {
  const response = await request(`${t.context.backend.url}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '"Rex"',
  });
  t.is(response.status, 400);
  t.is(response.body.code, 'invalid_json');
});

test('a missing body answers 400', async (t) => {
  const response = await request(`${t.context.backend.url}/pets`, { method: 'POST' });
  t.is(response.status, 400);
  t.is(response.body.code, 'validation_failed');
});

for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
  test(`a ${contentType} body answers 415 unsupported_media_type`, async (t) => {
    const response = await request(`${t.context.backend.url}/pets`, {
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
  const response = await request(`${t.context.backend.url}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  });
  t.is(response.status, 201);
});

test('a body over 64 KiB answers 413 payload_too_large', async (t) => {
  const response = await request(`${t.context.backend.url}/pets`, {
    method: 'POST',
    json: { name: 'Rex', categoryId: 1, padding: 'x'.repeat(70 * 1024) },
  });
  t.is(response.status, 413);
  t.is(response.body.code, 'payload_too_large');
  t.deepEqual(contractProblems('POST', '/pets', response), []);
});

test('an unknown path answers 404 not_found in the Error shape', async (t) => {
  const response = await request(`${t.context.backend.url}/unicorns`);
  t.is(response.status, 404);
  t.deepEqual(response.body, { code: 'not_found', message: 'No resource at GET /unicorns.', status: 404 });
});

test('a wrong method answers 405 with Allow', async (t) => {
  const response = await request(`${t.context.backend.url}/pets`, { method: 'DELETE' });
  t.is(response.status, 405);
  t.is(response.body.code, 'method_not_allowed');
  t.is(response.body.status, 405);
  t.is(response.headers.get('allow'), 'HEAD, GET, POST');
});

test('a wrong method on an item path answers 405 with its own Allow', async (t) => {
  const response = await request(`${t.context.backend.url}/pets/1`, { method: 'PUT', json: {} });
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'HEAD, GET');
});

test('an unexpected failure answers 500 internal_error without internals, and is logged', async (t) => {
  const { createApp } = await import('../../backend/src/app.ts');
  const { openDatabase } = await import('../../backend/src/db/connect.ts');
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { createServer } = await import('node:http');
  const db = await openDatabase({ dataDir: mkdtempSync(join(tmpdir(), 'animal-store-broken-')) });
  await db.destroy(); // every query now fails
  const logged: unknown[] = [];
  const server = createServer(createApp({ db, logError: (error) => logged.push(error) }).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const response = await request(`http://127.0.0.1:${port}/pets`);
  server.close();
  t.is(response.status, 500);
  t.deepEqual(response.body, { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 });
  t.is(logged.length, 1);
});

test('every error code the backend can emit is listed in the OpenAPI document', (t) => {
  for (const code of Object.values(ErrorCode)) t.true(documentedErrorCodes.has(code), code);
});
