import test from 'ava';
import { encodeCursor } from '../../backend/src/http/pagination.ts';
import { request, startTestBackend, type TestBackend } from '../helpers/backend.ts';
import { contractProblems } from '../helpers/openapi-contract.ts';

let backend: TestBackend;
const STATUSES = ['available', 'pending', 'sold'] as const;
const PET_COUNT = 45;

test.before(async () => {
  backend = await startTestBackend();
  await backend.db('pets').insert(
    Array.from({ length: PET_COUNT }, (_, i) => ({ name: `pet-${i + 1}`, category_id: 1, status: STATUSES[i % 3] })),
  );
});
test.after.always(async () => {
  await backend?.dispose();
});

function nextLink(headers: Headers): string | undefined {
  const link = headers.get('link');
  return link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
}

test('GET /pets returns 20 by default, ascending by id, with a Link to the next page', async (t) => {
  const response = await request(`${backend.url}/pets`, { headers: { 'X-Forwarded-Prefix': '/v1' } });
  t.is(response.status, 200);
  t.is(response.body.length, 20);
  t.deepEqual(response.body.map((pet: { id: number }) => pet.id), Array.from({ length: 20 }, (_, i) => i + 1));
  t.regex(nextLink(response.headers)!, /^\/v1\/pets\?limit=20&cursor=[A-Za-z0-9_-]+$/);
  t.deepEqual(contractProblems('GET', '/pets', response), []);
});

test('following Link walks every pet exactly once and the last page has no Link', async (t) => {
  const { url } = backend;
  const seen: number[] = [];
  let path: string | undefined = '/pets?limit=7';
  let pages = 0;
  while (path) {
    const response = await request(`${url}${path}`);
    t.is(response.status, 200);
    seen.push(...response.body.map((pet: { id: number }) => pet.id));
    path = nextLink(response.headers);
    pages += 1;
  }
  t.is(pages, Math.ceil(PET_COUNT / 7));
  t.deepEqual(seen, Array.from({ length: PET_COUNT }, (_, i) => i + 1));
});

test('a page that ends exactly at the last pet has no Link', async (t) => {
  const response = await request(`${backend.url}/pets?limit=5&cursor=${encodeCursor(40)}`);
  t.is(response.body.length, 5);
  t.is(response.headers.get('link'), null);
});

test('the status filter applies on every page and is carried by the Link', async (t) => {
  const { url } = backend;
  const first = await request(`${url}/pets?status=sold&limit=10`);
  t.true(first.body.every((pet: { status: string }) => pet.status === 'sold'));
  t.is(first.body.length, 10);
  const next = nextLink(first.headers)!;
  t.regex(next, /status=sold/);
  const second = await request(`${url}${next}`);
  t.is(second.body.length, PET_COUNT / 3 - 10);
  t.true(second.body.every((pet: { status: string }) => pet.status === 'sold'));
  t.is(nextLink(second.headers), undefined);
});

test('limit accepts 1 and 100', async (t) => {
  const one = await request(`${backend.url}/pets?limit=1`);
  t.is(one.body.length, 1);
  const hundred = await request(`${backend.url}/pets?limit=100`);
  t.is(hundred.body.length, PET_COUNT);
  t.is(nextLink(hundred.headers), undefined);
});

for (const limit of ['0', '101', '-1', '2.5', 'ten', '', '1e2']) {
  test(`limit=${JSON.stringify(limit)} answers 400 validation_failed`, async (t) => {
    const response = await request(`${backend.url}/pets?limit=${encodeURIComponent(limit)}`);
    t.is(response.status, 400);
    t.is(response.body.code, 'validation_failed');
    t.regex(response.body.message, /limit/);
    t.deepEqual(contractProblems('GET', '/pets', response), []);
  });
}

test('a repeated limit answers 400', async (t) => {
  const response = await request(`${backend.url}/pets?limit=1&limit=2`);
  t.is(response.status, 400);
});

test('an unknown status filter answers 400 validation_failed', async (t) => {
  const response = await request(`${backend.url}/pets?status=lost`);
  t.is(response.status, 400);
  t.is(response.body.code, 'validation_failed');
  t.regex(response.body.message, /status/);
});

for (const cursor of ['zz', 'aWQ6', 'aWQ6MA', 'aWQ6LTE', '!!!', Buffer.from('id:99999999999999999').toString('base64url')]) {
  test(`cursor ${cursor} answers 400 invalid_cursor`, async (t) => {
    const response = await request(`${backend.url}/pets?cursor=${encodeURIComponent(cursor)}`);
    t.is(response.status, 400);
    t.is(response.body.code, 'invalid_cursor');
  });
}

test('an X-Forwarded-Prefix that is not a plain path is ignored in links', async (t) => {
  const response = await request(`${backend.url}/pets?limit=1`, {
    headers: { 'X-Forwarded-Prefix': 'https://evil.example/' },
  });
  t.regex(nextLink(response.headers)!, /^\/pets\?/);
});

// Kong forwards the path the client asked for as X-Forwarded-Path; a regex route strips its whole
// match (GET /v1/pets/ reaches us as /pets/ with X-Forwarded-Prefix /v1/pets/), so links start from it.
test('links start from the path the client asked for (X-Forwarded-Path), normalised', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ 'X-Forwarded-Prefix': '/v1/pets/', 'X-Forwarded-Path': '/v1/pets/' }, '/v1/pets'],
    [{ 'X-Forwarded-Prefix': '/v1', 'X-Forwarded-Path': '/v1//pets/./' }, '/v1/pets'],
    [{ 'X-Forwarded-Prefix': '/v1', 'X-Forwarded-Path': '/v1/pets' }, '/v1/pets'],
    [{ 'X-Forwarded-Prefix': '/v1', 'X-Forwarded-Path': '/v1/%70ets' }, '/v1/pets'],
    [{ 'X-Forwarded-Prefix': '/v1' }, '/v1/pets'],
  ];
  for (const [headers, path] of cases) {
    const response = await request(`${backend.url}/pets/?limit=2`, { headers });
    t.regex(nextLink(response.headers)!, new RegExp(`^${path}\\?limit=2&cursor=`), JSON.stringify(headers));
  }
  // the page cache keys by that path: another public path of the same query gets its own link
  const other = await request(`${backend.url}/pets?limit=2`, { headers: { 'X-Forwarded-Prefix': '/api', 'X-Forwarded-Path': '/api/pets' } });
  t.regex(nextLink(other.headers)!, /^\/api\/pets\?limit=2&cursor=/);
});
