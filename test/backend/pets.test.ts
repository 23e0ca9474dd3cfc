import test from 'ava';
import { request, startTestBackend, type TestBackend } from '../helpers/backend.ts';
import { contractProblems, schemaProblems } from '../helpers/openapi-contract.ts';

let backend: TestBackend;

test.before(async () => {
  backend = await startTestBackend();
});
test.after.always(async () => {
  await backend?.dispose();
});

const createPet = (json: unknown, headers: HeadersInit = {}) =>
  request(`${backend.url}/pets`, { method: 'POST', json, headers });

test('POST /pets creates a pet, defaults status to available and points Location at the public path', async (t) => {
  const created = await createPet({ name: 'Rex', categoryId: 3 }, { 'X-Forwarded-Prefix': '/v1' });
  t.is(created.status, 201);
  t.like(created.body, { name: 'Rex', categoryId: 3, status: 'available' });
  t.true(Number.isInteger(created.body.id));
  t.is(created.headers.get('location'), `/v1/pets/${created.body.id}`);
  t.deepEqual(contractProblems('POST', '/pets', created), []);

  const fetched = await request(`${backend.url}/pets/${created.body.id}`);
  t.is(fetched.status, 200);
  t.deepEqual(fetched.body, created.body);
  t.deepEqual(contractProblems('GET', '/pets/{petId}', fetched), []);
});

test('POST /pets keeps an explicit status', async (t) => {
  const created = await createPet({ name: 'Tom', categoryId: 1, status: 'sold' });
  t.is(created.status, 201);
  t.is(created.body.status, 'sold');
});

test('POST /pets accepts the largest exactly representable int64 and rejects anything larger', async (t) => {
  const max = Number.MAX_SAFE_INTEGER;
  const ok = await createPet({ name: 'Big', categoryId: max });
  t.is(ok.status, 201);
  t.is(ok.body.categoryId, max);

  // 2^53 + 1 cannot be held by a JSON number parser without rounding: refused, never altered.
  const response = await request(`${backend.url}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"Huge","categoryId":9007199254740993}',
  });
  t.is(response.status, 400);
  t.is(response.body.code, 'validation_failed');
  t.regex(response.body.message, /categoryId/);
});

const invalidBodies: Array<[string, unknown, RegExp]> = [
  ['missing name', { categoryId: 1 }, /name/],
  ['missing categoryId', { name: 'a' }, /categoryId/],
  ['empty name', { name: '', categoryId: 1 }, /name/],
  ['blank name', { name: '   ', categoryId: 1 }, /name.*blank/],
  ['name over 200 characters', { name: 'x'.repeat(201), categoryId: 1 }, /name/],
  ['categoryId zero', { name: 'a', categoryId: 0 }, /categoryId/],
  ['categoryId negative', { name: 'a', categoryId: -5 }, /categoryId/],
  ['categoryId fractional', { name: 'a', categoryId: 1.5 }, /categoryId/],
  ['categoryId as string', { name: 'a', categoryId: '1' }, /categoryId/],
  ['status outside the enum', { name: 'a', categoryId: 1, status: 'lost' }, /status/],
  ['unknown fields', { name: 'a', categoryId: 1, colour: 'red', age: 2 }, /unknown field\(s\): colour, age/],
];

for (const [label, body, message] of invalidBodies) {
  test(`POST /pets rejects ${label} with 400 validation_failed`, async (t) => {
    const response = await createPet(body);
    t.is(response.status, 400);
    t.is(response.body.code, 'validation_failed');
    t.regex(response.body.message, message);
    t.deepEqual(contractProblems('POST', '/pets', response), []);
  });
}

test('POST /pets accepts a name of exactly 200 characters', async (t) => {
  const response = await createPet({ name: 'y'.repeat(200), categoryId: 1 });
  t.is(response.status, 201);
});

test('a name is measured in characters as the contract counts them (code points): 200 emoji fit, 201 do not', async (t) => {
  const emoji = await createPet({ name: '\u{1F600}'.repeat(200), categoryId: 1 });
  t.is(emoji.status, 201);
  t.is(emoji.body.name, '\u{1F600}'.repeat(200));
  t.deepEqual(contractProblems('POST', '/pets', emoji), []);
  const over = await createPet({ name: '\u{1F600}'.repeat(201), categoryId: 1 });
  t.is(over.status, 400);
  t.is(over.body.message, 'Invalid pet: name: Expected a string of 1 to 200 characters; it has 201.');
});

test('a rejected POST /pets stores nothing', async (t) => {
  const response = await createPet({ name: 'Ghost', categoryId: 1, extra: true });
  t.is(response.status, 400);
  t.deepEqual(await backend.db('pets').where({ name: 'Ghost' }), []);
});

test('GET /pets/{petId} answers 404 pet_not_found for an unknown id', async (t) => {
  const response = await request(`${backend.url}/pets/999999`);
  t.is(response.status, 404);
  t.deepEqual(response.body, { code: 'pet_not_found', message: 'Pet 999999 was not found.', status: 404 });
  t.deepEqual(contractProblems('GET', '/pets/{petId}', response), []);
});

for (const id of ['abc', '0', '-1', '1.5', '9007199254740993', '1e3']) {
  test(`GET /pets/${id} answers 400 for a non-integer or out-of-range id`, async (t) => {
    const response = await request(`${backend.url}/pets/${id}`);
    t.is(response.status, 400);
    t.is(response.body.code, 'validation_failed');
  });
}

test('the contract\'s NewPet accepts a name exactly when POST /pets does: U+0000 anywhere, or only blanks, refused', async (t) => {
  for (const name of ['Rex', ' Rex ', '\u0000', '\u0000Rex', 'Rex\u0000', 'R\u0000x', ' ', '\t\n', '\u0000 ', 'é\u00d8']) {
    const response = await createPet({ name, categoryId: 1 });
    t.is(response.status === 201, schemaProblems('NewPet', { name, categoryId: 1 }).length === 0, JSON.stringify(name));
  }
});
