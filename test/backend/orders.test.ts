import test from 'ava';
import { request, startTestBackend, type TestBackend } from '../helpers/backend.ts';
import { contractProblems } from '../helpers/openapi-contract.ts';

let backend: TestBackend;

test.before(async () => {
  backend = await startTestBackend();
});
test.after.always(async () => {
  await backend?.dispose();
});

async function newPet(status = 'available'): Promise<number> {
  const response = await request(`${backend.url}/pets`, { method: 'POST', json: { name: 'Kit', categoryId: 2, status } });
  return response.body.id;
}

const petStatus = async (id: number) =>
  (await request(`${backend.url}/pets/${id}`)).body.status;

const placeOrder = (petId: unknown) =>
  request(`${backend.url}/store/orders`, { method: 'POST', json: { petId }, headers: { 'X-Forwarded-Prefix': '/v1' } });

const act = (orderId: number, action: string) =>
  request(`${backend.url}/store/orders/${orderId}/${action}`, { method: 'POST' });

test('placing an order creates it and makes the pet pending', async (t) => {
  const petId = await newPet();
  const response = await placeOrder(petId);
  t.is(response.status, 201);
  t.like(response.body, { petId, status: 'placed' });
  t.is(response.body.createdAt, response.body.updatedAt);
  t.is(response.headers.get('location'), `/v1/store/orders/${response.body.id}`);
  t.is(response.headers.get('x-api-stability'), 'experimental');
  t.deepEqual(contractProblems('POST', '/store/orders', response, { checkHeaders: false }), []);
  t.is(await petStatus(petId), 'pending');

  const fetched = await request(`${backend.url}/store/orders/${response.body.id}`);
  t.deepEqual(fetched.body, response.body);
  t.deepEqual(contractProblems('GET', '/store/orders/{orderId}', fetched), []);
});

test('ordering an unknown pet answers 404 pet_not_found', async (t) => {
  const response = await placeOrder(987654);
  t.is(response.status, 404);
  t.is(response.body.code, 'pet_not_found');
});

for (const status of ['pending', 'sold']) {
  test(`ordering a ${status} pet answers 409 pet_not_available and changes nothing`, async (t) => {
    const petId = await newPet(status);
    const response = await placeOrder(petId);
    t.is(response.status, 409);
    t.is(response.body.code, 'pet_not_available');
    t.is(await petStatus(petId), status);
  });
}

test('an order body with unknown fields or a bad petId answers 400', async (t) => {
  for (const json of [{}, { petId: 'x' }, { petId: 1, quantity: 2 }, { petId: 0 }]) {
    const response = await request(`${backend.url}/store/orders`, { method: 'POST', json });
    t.is(response.status, 400, JSON.stringify(json));
    t.is(response.body.code, 'validation_failed');
  }
});

test('10 concurrent orders for one pet give exactly one 201 and nine 409', async (t) => {
  const petId = await newPet();
  const responses = await Promise.all(Array.from({ length: 10 }, () => placeOrder(petId)));
  const statuses = responses.map((response) => response.status).sort();
  t.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
  const orders = await backend.db('orders').where({ pet_id: petId });
  t.is(orders.length, 1);
});

test('placed → approved → delivered makes the pet sold', async (t) => {
  const petId = await newPet();
  const order = (await placeOrder(petId)).body;
  const approved = await act(order.id, 'approve');
  t.is(approved.status, 200);
  t.is(approved.body.status, 'approved');
  t.deepEqual(contractProblems('POST', '/store/orders/{orderId}/approve', approved), []);
  const delivered = await act(order.id, 'deliver');
  t.is(delivered.body.status, 'delivered');
  t.is(await petStatus(petId), 'sold');
});

test('cancelling a placed or approved order makes the pet available again', async (t) => {
  for (const before of [[], ['approve']]) {
    const petId = await newPet();
    const order = (await placeOrder(petId)).body;
    for (const action of before) await act(order.id, action);
    const cancelled = await act(order.id, 'cancel');
    t.is(cancelled.status, 200);
    t.is(cancelled.body.status, 'cancelled');
    t.is(await petStatus(petId), 'available');
  }
});

const illegal: Array<[string[], string]> = [
  [[], 'deliver'],
  [['approve'], 'approve'],
  [['approve', 'deliver'], 'cancel'],
  [['approve', 'deliver'], 'approve'],
  [['cancel'], 'approve'],
  [['cancel'], 'deliver'],
  [['cancel'], 'cancel'],
];
for (const [path, action] of illegal) {
  test(`${['place', ...path].join(' → ')} then ${action} answers 409 invalid_order_transition`, async (t) => {
    const petId = await newPet();
    const order = (await placeOrder(petId)).body;
    for (const step of path) t.is((await act(order.id, step)).status, 200);
    const petBefore = await petStatus(petId);
    const response = await act(order.id, action);
    t.is(response.status, 409);
    t.is(response.body.code, 'invalid_order_transition');
    t.is(await petStatus(petId), petBefore);
  });
}

test('an unknown order answers 404 order_not_found on read and on transition', async (t) => {
  t.is((await request(`${backend.url}/store/orders/424242`)).body.code, 'order_not_found');
  t.is((await act(424242, 'approve')).body.code, 'order_not_found');
});

test('an unknown order action answers 404', async (t) => {
  const response = await act(1, 'refund');
  t.is(response.status, 404);
  t.is(response.body.code, 'not_found');
});

test('GET /store/orders lists orders, filters by status and marks the area experimental', async (t) => {
  const petId = await newPet();
  const order = (await placeOrder(petId)).body;
  await act(order.id, 'approve');
  const response = await request(`${backend.url}/store/orders?status=approved&limit=100`);
  t.is(response.status, 200);
  t.is(response.headers.get('x-api-stability'), 'experimental');
  t.true(response.body.some((o: { id: number }) => o.id === order.id));
  t.true(response.body.every((o: { status: string }) => o.status === 'approved'));
  t.deepEqual(contractProblems('GET', '/store/orders', response), []);
  const bad = await request(`${backend.url}/store/orders?status=lost`);
  t.is(bad.status, 400);
});

test('order timestamps come from the injected clock', async (t) => {
  const { createApp } = await import('../../backend/src/index.ts');
  const { createServer } = await import('node:http');
  const fixed = new Date('2030-01-02T03:04:05.000Z');
  const server = createServer(createApp({ db: backend.db, clock: () => fixed }).app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const petId = await newPet();
  const response = await request(`http://127.0.0.1:${port}/store/orders`, { method: 'POST', json: { petId } });
  server.close();
  t.is(response.body.createdAt, '2030-01-02T03:04:05.000Z');
});

test('cached pet pages follow every write: create, order, cancel', async (t) => {
  const { url } = backend;
  const availableIds = async () =>
    (await request(`${url}/pets?status=available&limit=100`)).body.map((pet: { id: number }) => pet.id) as number[];
  await availableIds(); // warm the cache
  const petId = await newPet();
  t.true((await availableIds()).includes(petId));
  const order = (await placeOrder(petId)).body;
  t.false((await availableIds()).includes(petId));
  await act(order.id, 'cancel');
  t.true((await availableIds()).includes(petId));
});
