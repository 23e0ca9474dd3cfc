import test from 'ava';
import { request, startTestBackend } from '../helpers/backend.ts';

// The contract types ids and limit as JSON Schema integers, which admit 22.0 (a zero fraction);
// Schemathesis sends such values as valid data and expects them accepted.
test('integer parameters accept a zero fraction, and nothing else that is not digits', async (t) => {
  const backend = await startTestBackend();
  t.teardown(() => backend.dispose());
  const created = await request(`${backend.url}/pets`, { method: 'POST', json: { name: 'Rex', categoryId: 1 } });
  const id = created.body.id as number;
  t.deepEqual((await request(`${backend.url}/pets/${id}.0`)).body, created.body);
  t.deepEqual((await request(`${backend.url}/pets/${id}.000`)).body, created.body);
  t.is((await request(`${backend.url}/pets?limit=1.0`)).status, 200);
  for (const bad of [`${id}.5`, `${id}.`, `.0`, `${id}e0`, `0x${id}`, `${id}.0.0`]) {
    const response = await request(`${backend.url}/pets/${bad}`);
    t.is(response.status, 400, bad);
    t.is(response.body.code, 'validation_failed');
  }
  t.is((await request(`${backend.url}/pets?limit=2.5`)).status, 400);
});

// JSON.parse reads numbers as doubles: these literals reach the validators as integers only because
// they were rounded (the contract: ids are never rounded).
test('a JSON number that is an integer only by rounding answers 400; exact integers in any notation are accepted', async (t) => {
  const backend = await startTestBackend();
  t.teardown(() => backend.dispose());
  const post = (categoryId: string) =>
    request(`${backend.url}/pets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"name":"Rex","categoryId":${categoryId}}` });
  for (const rounded of ['9007199254740990.9999', '1.00000000000000001', '2.0000000000000000000000000001e0', '1e-400', '100000000000000000001e-20']) {
    const response = await post(rounded);
    t.is(response.status, 400, rounded);
    t.is(response.body.code, 'validation_failed', rounded);
    t.regex(response.body.message, /^Invalid request body: categoryId: expected an integer, but received /, rounded);
  }
  for (const [exact, stored] of [['1.0', 1], ['1e0', 1], ['10e-1', 1], ['2.50e1', 25], ['9007199254740991', 9007199254740991]] as const) {
    const response = await post(exact);
    t.is(response.status, 201, exact);
    t.is(response.body.categoryId, stored, exact);
  }
  const order = await request(`${backend.url}/store/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"petId":1.0000000000000000001}' });
  t.is(order.status, 400);
  t.regex(order.body.message, /petId: expected an integer/);
});
