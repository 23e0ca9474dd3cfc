// Idempotency-Key on every POST (issue 16), on SQLite, through real HTTP. PostgreSQL and crashes:
// idempotency-postgres.test.ts and idempotency-crash.test.ts.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { purgeExpired } from '../../backend/src/idempotency/expiry.ts';
import { IdempotencyStore } from '../../backend/src/idempotency/idempotency-store.ts';
import { request, startTestBackend, type TestBackend } from '../helpers/backend.ts';
import { ManualClock } from '../helpers/clock.ts';
import { contractProblems } from '../helpers/openapi-contract.ts';

const START = Date.parse('2030-01-01T00:00:00.000Z');
const DAY_MS = 24 * 60 * 60 * 1000;

/** A backend of the test's own on a manual clock at START, disposed when the test ends. */
async function freshBackend(t: ExecutionContext): Promise<{ backend: TestBackend; clock: ManualClock }> {
  const clock = new ManualClock(START);
  const backend = await startTestBackend({ app: { clock: () => new Date(clock.now()) } });
  t.teardown(() => backend.dispose());
  return { backend, clock };
}

let keys = 0;
const newKey = () => `key-${process.pid}-${++keys}`;

const post = (backend: TestBackend, path: string, key: string | undefined, json?: unknown, headers: Record<string, string> = {}) =>
  request(`${backend.url}${path}`, {
    method: 'POST',
    headers: { 'X-Consumer-ID': 'consumer-a', 'X-Forwarded-Prefix': '/v1', ...(key === undefined ? {} : { 'Idempotency-Key': key }), ...headers },
    json,
  });
const petCount = async (backend: TestBackend) => Number((await backend.db('pets').count({ n: '*' }))[0]!.n);

test('a repeated POST /pets replays the first response with Idempotent-Replayed and creates one pet', async (t) => {
  const { backend } = await freshBackend(t);
  const key = newKey();
  const first = await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  t.is(first.status, 201);
  t.is(first.headers.get('idempotent-replayed'), null);
  const again = await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(again.body, first.body);
  t.is(again.headers.get('location'), `/v1/pets/${first.body.id}`);
  t.is(again.headers.get('content-type'), 'application/json; charset=utf-8');
  t.deepEqual(contractProblems('POST', '/pets', again), []);
  t.is(await petCount(backend), 1);
});

test('order placement and transitions replay too, headers that matter included', async (t) => {
  const { backend } = await freshBackend(t);
  const pet = (await post(backend, '/pets', undefined, { name: 'Kit', categoryId: 2 })).body;
  const placeKey = newKey();
  const placed = await post(backend, '/store/orders', placeKey, { petId: pet.id });
  const replayed = await post(backend, '/store/orders', placeKey, { petId: pet.id });
  t.is(replayed.status, 201);
  t.deepEqual(replayed.body, placed.body);
  t.is(replayed.headers.get('location'), `/v1/store/orders/${placed.body.id}`);
  t.is(replayed.headers.get('x-api-stability'), 'experimental');
  t.deepEqual(contractProblems('POST', '/store/orders', replayed), []);
  t.is((await backend.db('orders').where({ pet_id: pet.id })).length, 1);

  const approveKey = newKey();
  const approved = await post(backend, `/store/orders/${placed.body.id}/approve`, approveKey);
  t.is(approved.status, 200);
  // Without the key a second approve is a 409; with it, the first outcome again.
  const approvedAgain = await post(backend, `/store/orders/${placed.body.id}/approve`, approveKey);
  t.is(approvedAgain.status, 200);
  t.is(approvedAgain.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(approvedAgain.body, approved.body);
  t.deepEqual(contractProblems('POST', '/store/orders/{orderId}/approve', approvedAgain), []);
});

test('a 4xx outcome is stored and replayed, not run again', async (t) => {
  const { backend } = await freshBackend(t);
  const pet = (await post(backend, '/pets', undefined, { name: 'Popular', categoryId: 3 })).body;
  const order = (await post(backend, '/store/orders', undefined, { petId: pet.id })).body;
  const key = newKey();
  const refused = await post(backend, '/store/orders', key, { petId: pet.id });
  t.is(refused.status, 409);
  t.is(refused.body.code, 'pet_not_available');

  await post(backend, `/store/orders/${order.id}/cancel`, undefined); // the pet is available again
  const replayed = await post(backend, '/store/orders', key, { petId: pet.id });
  t.is(replayed.status, 409);
  t.is(replayed.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(replayed.body, refused.body);
  t.is((await backend.db('pets').where({ id: pet.id }).first()).status, 'available');

  const invalid = newKey();
  t.is((await post(backend, '/pets', invalid, { name: '', categoryId: 1 })).status, 400);
  t.is((await post(backend, '/pets', invalid, { name: '', categoryId: 1 })).headers.get('idempotent-replayed'), 'true');
});

test('a 5xx outcome is not stored: the repeat runs', async (t) => {
  const { db, dataDir } = (await freshBackend(t)).backend;
  const logged: unknown[] = [];
  const { startBackend } = await import('../../backend/src/index.ts');
  const backend = await startBackend({ host: '127.0.0.1', port: 0, dataDir }, { logError: (error) => logged.push(error) });
  t.teardown(() => backend.close());
  const key = newKey();
  await db.raw('ALTER TABLE pets RENAME TO pets_away');
  const failed = await request(`${backend.url}/pets`, { method: 'POST', headers: { 'Idempotency-Key': key }, json: { name: 'Rex', categoryId: 1 } });
  t.is(failed.status, 500);
  t.is(logged.length, 1);
  await db.raw('ALTER TABLE pets_away RENAME TO pets');
  t.is((await db('idempotency_keys').where({ key })).length, 0);
  const retried = await request(`${backend.url}/pets`, { method: 'POST', headers: { 'Idempotency-Key': key }, json: { name: 'Rex', categoryId: 1 } });
  t.is(retried.status, 201);
  t.is(retried.headers.get('idempotent-replayed'), null);
});

test('the same key on a different request answers 422 idempotency_key_reused and runs nothing', async (t) => {
  const { backend } = await freshBackend(t);
  const key = newKey();
  await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  for (const [path, body] of [['/pets', { name: 'Rex', categoryId: 2 }], ['/store/orders', { petId: 1 }], ['/store/orders/1/cancel', undefined]] as const) {
    const response = await post(backend, path, key, body);
    t.is(response.status, 422, path);
    t.is(response.body.code, 'idempotency_key_reused');
  }
  // The body's bytes count: the same JSON with other whitespace is another request.
  const spaced = await request(`${backend.url}/pets`, {
    method: 'POST',
    headers: { 'X-Consumer-ID': 'consumer-a', 'Idempotency-Key': key, 'content-type': 'application/json' },
    body: '{"name": "Rex", "categoryId": 1}',
  });
  t.is(spaced.status, 422);
  t.deepEqual(contractProblems('POST', '/pets', spaced), []);
  t.is(await petCount(backend), 1);
});

// The router takes /pets/ and /pets as one operation; so does the key (a probe found /pets/ a 422).
test('the same operation replays whatever path spelling the router accepts; another resource is 422', async (t) => {
  const { backend } = await freshBackend(t);
  const key = newKey();
  const first = await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  for (const path of ['/pets/', '/pets?x=1', '/pets/?x=1']) {
    const again = await post(backend, path, key, { name: 'Rex', categoryId: 1 });
    t.is(again.status, 201, path);
    t.is(again.headers.get('idempotent-replayed'), 'true', path);
    t.deepEqual(again.body, first.body, path);
  }
  const slashFirst = newKey();
  const placed = await post(backend, '/store/orders/', slashFirst, { petId: first.body.id });
  t.is(placed.status, 201);
  t.is((await post(backend, '/store/orders', slashFirst, { petId: first.body.id })).headers.get('idempotent-replayed'), 'true');

  const approveKey = newKey();
  t.is((await post(backend, `/store/orders/${placed.body.id}/approve/`, approveKey)).status, 200);
  t.is((await post(backend, `/store/orders/${placed.body.id}/approve`, approveKey)).headers.get('idempotent-replayed'), 'true');
  const other = await post(backend, `/store/orders/${placed.body.id + 1}/approve`, approveKey);
  t.is(other.status, 422);
  t.is(other.body.code, 'idempotency_key_reused');
  t.is((await post(backend, `/store/orders/${placed.body.id}/cancel`, approveKey)).status, 422);
  t.is(await petCount(backend), 1);
});

// Records stored before the fingerprint named the operation hashed the method, the path as sent
// and the body: the path spelt as the route is keeps the same fingerprint, so those rows replay.
test('the fingerprint of a request spelt as its route is what it was when it hashed the raw path', async (t) => {
  const { createHash } = await import('node:crypto');
  const { backend } = await freshBackend(t);
  const cases: Array<[string, string]> = [['/pets/', '/pets'], ['/store/orders/1/cancel', '/store/orders/1/cancel'], ['/store/orders/1/cancel/', '/store/orders/1/cancel']];
  for (const [path, operation] of cases) {
    const key = newKey();
    const body = path.startsWith('/pets') ? '{"name":"Rex","categoryId":1}' : '';
    await request(`${backend.url}${path}`, {
      method: 'POST',
      headers: { 'Idempotency-Key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body } : {}),
    });
    const row = await backend.db('idempotency_keys').where({ key }).first();
    t.is(row?.fingerprint, createHash('sha256').update(`POST\n${operation}\n${body}`).digest('hex'), path);
  }
});

/** The response's header names as sent (fetch lower-cases them), for POST `path`. */
function headerNames(backend: TestBackend, path: string, key: string, body: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${backend.url}${path}`, { method: 'POST', headers: { 'Idempotency-Key': key, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.rawHeaders.filter((_, index) => index % 2 === 0)));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('a replay spells its header names as the first answer did', async (t) => {
  const { backend } = await freshBackend(t);
  const pet = (await post(backend, '/pets', undefined, { name: 'Kit', categoryId: 2 })).body;
  const key = newKey();
  const body = JSON.stringify({ petId: pet.id });
  const first = await headerNames(backend, '/store/orders', key, body);
  const replayed = await headerNames(backend, '/store/orders', key, body);
  for (const name of ['Content-Type', 'Location', 'X-API-Stability']) {
    t.true(first.includes(name), `${name} in ${first.join(', ')}`);
    t.true(replayed.includes(name), `${name} in ${replayed.join(', ')}`);
  }
  t.true(replayed.includes('Idempotent-Replayed'));
});

test('keys are scoped to the consumer (X-Consumer-ID); requests without it share one scope', async (t) => {
  const { backend } = await freshBackend(t);
  const key = newKey();
  const a = await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  const b = await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 }, { 'X-Consumer-ID': 'consumer-b' });
  t.is(b.status, 201);
  t.not(b.body.id, a.body.id);
  const direct = (json: unknown) => request(`${backend.url}/pets`, { method: 'POST', headers: { 'Idempotency-Key': key }, json });
  const c = await direct({ name: 'Rex', categoryId: 1 });
  t.not(c.body.id, a.body.id);
  t.is((await direct({ name: 'Rex', categoryId: 1 })).headers.get('idempotent-replayed'), 'true');
  t.is(await petCount(backend), 3);
});

/** One request on a raw socket, for header bytes fetch refuses to send. */
function rawPost(url: string, path: string, headerLines: string[], body: string): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const head = [`POST ${path} HTTP/1.1`, `Host: ${hostname}`, 'Connection: close', 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, ...headerLines];
      socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.from(body)]));
    });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, payload] = text.split('\r\n\r\n');
      if (!payload) return reject(new Error(`no body in: ${text}`));
      resolve({ status: Number(head!.split(' ')[1]), body: JSON.parse(payload) });
    });
  });
}

test('a malformed key answers 400 invalid_idempotency_key and runs nothing', async (t) => {
  const { backend } = await freshBackend(t);
  const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
  // Node's parser lets a tab and bytes 0x80-0xFF through to the application; the key check refuses them.
  for (const key of ['', 'x'.repeat(256), 'tab\there', 'caf\xe9']) {
    const response = await rawPost(backend.url, '/pets', [`Idempotency-Key: ${key}`], body);
    t.is(response.status, 400, JSON.stringify(key));
    t.is(response.body.code, 'invalid_idempotency_key');
  }
  // Two header lines are two keys, not the key "a, b" Node would join them into.
  const twice = await rawPost(backend.url, '/pets', ['Idempotency-Key: a', 'Idempotency-Key: b'], body);
  t.deepEqual(twice, {
    status: 400,
    body: { code: 'invalid_idempotency_key', message: 'Idempotency-Key must be sent once, as 1 to 255 printable ASCII characters.', status: 400 },
  });
  // Other control bytes never reach it: Node's parser answers 400, in the Error shape.
  const bell = await rawPost(backend.url, '/pets', ['Idempotency-Key: bell\x07'], body);
  t.deepEqual(bell, { status: 400, body: { code: 'bad_request', message: 'The request is malformed: a header field or the body framing is not valid HTTP.', status: 400 } });
  t.is(await petCount(backend), 0);
  const longest = await post(backend, '/pets', 'k'.repeat(255), { name: 'Rex', categoryId: 1 });
  t.is(longest.status, 201);
  const quoted = await post(backend, '/pets', '"8e03978e-40d5-43e8-bc93-6894a57f9324"', { name: 'Rex', categoryId: 1 });
  t.is(quoted.status, 201);
});

test('a repeat while the first request still runs answers 409 idempotency_key_in_progress with Retry-After', async (t) => {
  const { backend } = await freshBackend(t);
  // The test holds the backend's only SQLite connection: both requests wait to look the key up,
  // the first's look-up comes first, finds no record and claims the key, then the second's finds
  // no record either while the first waits for its transaction, key claimed.
  const hold = await backend.db.transaction();
  const key = newKey();
  const first = post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  const pool = (backend.db.client as { pool: { numPendingAcquires(): number } }).pool;
  while (pool.numPendingAcquires() === 0) await new Promise((resolve) => setImmediate(resolve));
  const pending = post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  while (pool.numPendingAcquires() < 2) await new Promise((resolve) => setImmediate(resolve));
  await hold.commit();
  const second = await pending;
  t.is(second.status, 409);
  t.is(second.body.code, 'idempotency_key_in_progress');
  t.is(second.headers.get('retry-after'), '1');
  t.deepEqual(contractProblems('POST', '/pets', second), []);
  t.is((await first).status, 201);
  t.is((await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 })).headers.get('idempotent-replayed'), 'true');
  t.is(await petCount(backend), 1);
});

// The key is claimed only to run the request: repeats of a finished one are answered from its
// record, all of them, however many arrive at once.
test('repeats of a finished request sent at once all replay it; with another body all get 422', async (t) => {
  const { backend } = await freshBackend(t);
  const key = newKey();
  const first = await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  t.is(first.status, 201);
  const repeats = await Promise.all(Array.from({ length: 10 }, () => post(backend, '/pets', key, { name: 'Rex', categoryId: 1 })));
  t.deepEqual(repeats.map((r) => `${r.status} ${r.headers.get('idempotent-replayed')}`), Array(10).fill('201 true'));
  for (const repeat of repeats) t.deepEqual(repeat.body, first.body);
  const reused = await Promise.all(Array.from({ length: 4 }, () => post(backend, '/pets', key, { name: 'Other', categoryId: 1 })));
  t.deepEqual(reused.map((r) => r.body.code), Array(4).fill('idempotency_key_reused'));
  t.is(await petCount(backend), 1);
});

test('records expire after 24 hours of the injected clock; then the key is free again', async (t) => {
  const { backend, clock } = await freshBackend(t);
  const key = newKey();
  await post(backend, '/pets', key, { name: 'Rex', categoryId: 1 });
  await clock.advance(DAY_MS - 1);
  t.is((await post(backend, '/pets', key, { name: 'Other', categoryId: 1 })).status, 422);
  await clock.advance(1);
  const fresh = await post(backend, '/pets', key, { name: 'Other', categoryId: 1 });
  t.is(fresh.status, 201);
  t.is(fresh.headers.get('idempotent-replayed'), null);
  t.is((await post(backend, '/pets', key, { name: 'Other', categoryId: 1 })).headers.get('idempotent-replayed'), 'true');
});

test('purging deletes only expired records, in batches that let requests through', async (t) => {
  const { backend, clock } = await freshBackend(t);
  const { db } = backend;
  const store = new IdempotencyStore(db);
  const live = newKey();
  await post(backend, '/pets', live, { name: 'Rex', categoryId: 1 });
  const expired = Array.from({ length: 3000 }, (_, i) => ({
    scope: 'old', key: `k${i}`, fingerprint: 'f', status: 201, headers: '{}', body: '', expires_at: START - 1,
  }));
  for (let i = 0; i < expired.length; i += 300) await db('idempotency_keys').insert(expired.slice(i, i + 300));

  let purgeDone = false;
  const purge = purgeExpired(store, { now: clock.now, batchSize: 100 }).then((n) => ((purgeDone = true), n));
  const listed = await request(`${backend.url}/store/orders`);
  t.is(listed.status, 200);
  t.false(purgeDone, 'a request does not wait for the whole purge');
  t.is(await purge, 3000);
  t.deepEqual((await db('idempotency_keys').select('key')).map((row) => row.key), [live]);
});
