// The backend on PostgreSQL (DATABASE_URL), the store for several replicas: what differs from
// SQLite is the driver (int8 as strings, RETURNING), concurrency across processes and the
// absence of the in-memory page cache. Two backends share one database here, as replicas do.
import ava from 'ava';
import { request, startTestBackend, type TestBackend } from '../helpers/backend.ts';
import { contractProblems } from '../helpers/openapi-contract.ts';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { pollUntil } from '../helpers/poll.ts';

const test = ava.serial;
let postgres: TestPostgres;
let url: string;
let a: TestBackend;
let b: TestBackend;

test.before(async () => {
  postgres = await startTestPostgres();
  url = await postgres.createDatabase('animal_store');
  a = await startTestBackend({ databaseUrl: url });
  b = await startTestBackend({ databaseUrl: url });
});
test.after.always(async () => {
  await a?.dispose();
  await b?.dispose();
  await postgres?.dispose();
});

const createPet = (backend: TestBackend, json: unknown) => request(`${backend.url}/pets`, { method: 'POST', json });

test('pets are created with numeric ids and int64 fields read back as JSON numbers', async (t) => {
  t.is(a.db.client.config.client, 'pg');
  const created = await createPet(a, { name: 'Big', categoryId: Number.MAX_SAFE_INTEGER });
  t.is(created.status, 201);
  t.true(Number.isInteger(created.body.id));
  t.deepEqual(contractProblems('POST', '/pets', created), []);
  const fetched = await request(`${a.url}/pets/${created.body.id}`);
  t.deepEqual(fetched.body, created.body);
  t.is(fetched.body.categoryId, Number.MAX_SAFE_INTEGER);
});

test('a name holding U+0000, which PostgreSQL text cannot hold, answers 400, not a failed insert (500)', async (t) => {
  const refused = await createPet(a, { name: 'Rex\u0000', categoryId: 1 });
  t.is(refused.status, 400);
  t.is(refused.body.code, 'validation_failed');
});

test('a name of 200 emoji (400 UTF-16 units) fits varchar(200), which counts characters', async (t) => {
  const created = await createPet(a, { name: '\u{1F600}'.repeat(200), categoryId: 1 });
  t.is(created.status, 201);
  t.is((await request(`${b.url}/pets/${created.body.id}`)).body.name, '\u{1F600}'.repeat(200));
});

test('a pet written through one replica is listed by the other at once (no per-process page cache)', async (t) => {
  const before = await request(`${b.url}/pets?limit=100`);
  const created = await createPet(a, { name: 'Seen-by-b', categoryId: 1 });
  const after = await request(`${b.url}/pets?limit=100`);
  t.is(after.body.length, before.body.length + 1);
  t.deepEqual(after.body.at(-1), created.body);
});

test('keyset pages walk every pet once, in id order, with the status filter carried by Link', async (t) => {
  for (let i = 0; i < 7; i++) await createPet(a, { name: `pending-${i}`, categoryId: 2, status: 'pending' });
  const ids: number[] = [];
  let next: string | undefined = `/pets?status=pending&limit=3`;
  while (next) {
    const page = await request(`${b.url}${next}`);
    t.is(page.status, 200);
    t.deepEqual(contractProblems('GET', '/pets', page), []);
    for (const pet of page.body) {
      t.is(pet.status, 'pending');
      ids.push(pet.id);
    }
    next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
  }
  t.is(ids.length, 7);
  t.deepEqual(ids, [...ids].sort((x, y) => x - y));
});

test('10 concurrent orders for one pet across two replicas give exactly one 201 and nine 409', async (t) => {
  const pet = (await createPet(a, { name: 'Popular', categoryId: 3 })).body;
  const responses = await Promise.all(
    Array.from({ length: 10 }, (_, i) => request(`${(i % 2 ? a : b).url}/store/orders`, { method: 'POST', json: { petId: pet.id } })),
  );
  t.deepEqual(responses.map((response) => response.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
  t.is((await a.db('orders').where({ pet_id: pet.id })).length, 1);
  t.is((await request(`${b.url}/pets/${pet.id}`)).body.status, 'pending');
});

test('an order moves through approve and deliver, and the pet ends sold', async (t) => {
  const pet = (await createPet(a, { name: 'Kit', categoryId: 4 })).body;
  const placed = await request(`${a.url}/store/orders`, { method: 'POST', json: { petId: pet.id } });
  t.is(placed.status, 201);
  t.deepEqual(contractProblems('POST', '/store/orders', placed, { checkHeaders: false }), []);
  t.is((await request(`${b.url}/store/orders/${placed.body.id}/approve`, { method: 'POST' })).body.status, 'approved');
  const delivered = await request(`${a.url}/store/orders/${placed.body.id}/deliver`, { method: 'POST' });
  t.like(delivered.body, { id: placed.body.id, petId: pet.id, status: 'delivered' });
  t.is((await request(`${b.url}/pets/${pet.id}`)).body.status, 'sold');
  const again = await request(`${b.url}/store/orders/${placed.body.id}/cancel`, { method: 'POST' });
  t.is(again.status, 409);
  t.is(again.body.code, 'invalid_order_transition');
});

// The conditional UPDATE decides across processes: PostgreSQL re-reads the row the loser waited
// on and finds it no longer approved, so the pet cannot end available after a delivery.
test('deliver and cancel of one order at once on two replicas: one wins, the pet follows the winner', async (t) => {
  const outcomes = new Set<string>();
  for (let round = 0; round < 4; round++) {
    const pet = (await createPet(a, { name: `Contested ${round}`, categoryId: 5 })).body;
    const order = (await request(`${a.url}/store/orders`, { method: 'POST', json: { petId: pet.id } })).body;
    t.is((await request(`${b.url}/store/orders/${order.id}/approve`, { method: 'POST' })).status, 200);
    const [delivered, cancelled] = await Promise.all([
      request(`${(round % 2 ? a : b).url}/store/orders/${order.id}/deliver`, { method: 'POST' }),
      request(`${(round % 2 ? b : a).url}/store/orders/${order.id}/cancel`, { method: 'POST' }),
    ]);
    t.deepEqual([delivered.status, cancelled.status].sort(), [200, 409]);
    const winner = delivered.status === 200 ? 'delivered' : 'cancelled';
    outcomes.add(winner);
    t.is((await request(`${b.url}/store/orders/${order.id}`)).body.status, winner);
    t.is((await request(`${a.url}/pets/${pet.id}`)).body.status, winner === 'delivered' ? 'sold' : 'available');
  }
  t.log('winners seen:', [...outcomes].join(', '));
});

test('a backend restarted on the same database keeps its data and does not re-run migrations', async (t) => {
  const created = await createPet(a, { name: 'Survivor', categoryId: 5 });
  const restarted = await startTestBackend({ databaseUrl: url });
  try {
    t.deepEqual((await request(`${restarted.url}/pets/${created.body.id}`)).body, created.body);
    t.deepEqual((await restarted.db('knex_migrations').select('name')).map((row) => row.name), ['001_pets_and_orders', '002_idempotency_keys', '003_ids_within_json_integers']);
  } finally {
    await restarted.dispose();
  }
});

test('replicas started at once on a new database all start, and knex is left one free lock row', async (t) => {
  // knex inserts its lock row unguarded: two starts that both found the lock table empty left two
  // rows, and from then on every start failed with "Migration table is already locked"
  const url = await postgres.createDatabase('replicas_at_once');
  const replicas = await Promise.all(Array.from({ length: 4 }, () => startTestBackend({ databaseUrl: url })));
  try {
    t.is((await request(`${replicas[3]!.url}/pets`)).status, 200);
    t.deepEqual(await replicas[0]!.db('knex_migrations_lock').select('is_locked'), [{ is_locked: 0 }]);
    t.is((await replicas[0]!.db('knex_migrations').count({ n: '*' }))[0]!.n, '3');
  } finally {
    await Promise.all(replicas.map((replica) => replica.dispose()));
  }
});

test('a lock table an earlier race left with two rows, or a crashed run left locked, is put right at the next start', async (t) => {
  const url = await postgres.createDatabase('lock_left_behind');
  const first = await startTestBackend({ databaseUrl: url });
  await first.db('knex_migrations_lock').insert({ is_locked: 0 });
  await first.dispose();
  const second = await startTestBackend({ databaseUrl: url });
  t.deepEqual(await second.db('knex_migrations_lock').select('is_locked'), [{ is_locked: 0 }]);
  await second.db('knex_migrations_lock').update({ is_locked: 1 });
  await second.dispose();
  const third = await startTestBackend({ databaseUrl: url });
  try {
    t.deepEqual(await third.db('knex_migrations_lock').select('is_locked'), [{ is_locked: 0 }]);
  } finally {
    await third.dispose();
  }
});

const keyed = (backend: TestBackend, key: string, json: unknown) =>
  request(`${backend.url}/pets`, { method: 'POST', headers: { 'Idempotency-Key': key, 'X-Consumer-ID': 'pg' }, json });

test('an Idempotency-Key recorded through one replica is replayed by the other', async (t) => {
  const first = await keyed(a, 'pg-replay', { name: 'Once', categoryId: 6 });
  const again = await keyed(b, 'pg-replay', { name: 'Once', categoryId: 6 });
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  t.is((await keyed(b, 'pg-replay', { name: 'Twice', categoryId: 6 })).body.code, 'idempotency_key_reused');
});

test('10 concurrent requests with one key across two replicas run once; the others replay or get 409', async (t) => {
  const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => keyed(i % 2 ? a : b, 'pg-race', { name: 'Raced', categoryId: 7 })));
  const ran = responses.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
  t.is(ran.length, 1);
  for (const response of responses) {
    if (response.status === 409) {
      t.is(response.body.code, 'idempotency_key_in_progress');
      t.is(response.headers.get('retry-after'), '1');
    } else {
      t.deepEqual(response.body, ran[0]!.body);
    }
  }
  t.is((await a.db('pets').where({ name: 'Raced' })).length, 1);
});

test('repeats of a finished request sent at once on both replicas all replay it', async (t) => {
  const first = await keyed(a, 'pg-done', { name: 'Done', categoryId: 9 });
  const repeats = await Promise.all(Array.from({ length: 10 }, (_, i) => keyed(i % 2 ? a : b, 'pg-done', { name: 'Done', categoryId: 9 })));
  t.deepEqual(repeats.map((r) => `${r.status} ${r.headers.get('idempotent-replayed')}`), Array(10).fill('201 true'));
  for (const repeat of repeats) t.deepEqual(repeat.body, first.body);
});

test('a repeat on another replica while the first still runs gets 409 from the advisory lock', async (t) => {
  const lock = await a.db.transaction(); // the test's own connection from a's pool
  await lock.raw('LOCK TABLE idempotency_keys IN SHARE MODE');
  const first = keyed(a, 'pg-slow', { name: 'Slow', categoryId: 8 });
  await pollUntil('the first request to hold its advisory lock', async () => {
    const { rows } = await b.db.raw("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted");
    return rows.length > 0;
  });
  const second = await keyed(b, 'pg-slow', { name: 'Slow', categoryId: 8 });
  t.is(second.status, 409);
  t.is(second.body.code, 'idempotency_key_in_progress');
  await lock.commit();
  t.is((await first).status, 201);
  t.is((await keyed(b, 'pg-slow', { name: 'Slow', categoryId: 8 })).headers.get('idempotent-replayed'), 'true');
});

test("ids stop at 2^53-1, the largest the contract's Id keeps exact: past it an insert fails instead of handing out a rounded id", async (t) => {
  const ids = await startTestBackend({ databaseUrl: await postgres.createDatabase('animal_store_ids') });
  t.teardown(() => ids.dispose());
  await ids.db.raw("SELECT setval('pets_id_seq', 9007199254740990)");
  const last = await request(`${ids.url}/pets`, { method: 'POST', json: { name: 'Last', categoryId: 1 } });
  t.is(last.status, 201);
  t.is(last.body.id, Number.MAX_SAFE_INTEGER);
  t.is((await request(`${ids.url}/pets/${Number.MAX_SAFE_INTEGER}`)).body.name, 'Last');
  const past = await request(`${ids.url}/pets`, { method: 'POST', json: { name: 'Past', categoryId: 1 } });
  t.is(past.status, 500);
  t.is(past.body.code, 'internal_error');
  t.is((await ids.db('pets').count({ n: '*' }))[0]!.n, '1');
});

// Last in the file: it stops the file's server. An outage is the database's, not a bug: 503 with
// Retry-After in the Error shape (the contract's service_unavailable), and the first requests once
// it is back are served without a restart.
test('while PostgreSQL is down every request answers 503 service_unavailable with Retry-After; it recovers by itself', async (t) => {
  await postgres.stop();
  try {
    for (const [path, init] of [
      ['/pets', {}],
      ['/pets/1', {}],
      ['/pets', { method: 'POST', json: { name: 'Down', categoryId: 1 } }],
      ['/pets', { method: 'POST', json: { name: 'Down', categoryId: 1 }, headers: { 'Idempotency-Key': 'pg-down', 'X-Consumer-ID': 'pg' } }],
    ] as const) {
      const response = await request(`${a.url}${path}`, init);
      t.is(response.status, 503, `${init.method ?? 'GET'} ${path}`);
      t.deepEqual(response.body, { code: 'service_unavailable', message: 'The service is temporarily unavailable; retry after Retry-After seconds.', status: 503 });
      t.is(response.headers.get('retry-after'), '5');
    }
  } finally {
    await postgres.start();
  }
  await pollUntil('the backend to serve again', async () => (await request(`${a.url}/pets?limit=1`)).status === 200);
  t.is((await request(`${b.url}/pets`, { method: 'POST', json: { name: 'Back', categoryId: 1 } })).status, 201);
});
