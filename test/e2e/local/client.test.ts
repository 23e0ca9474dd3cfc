import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import { startBackend, type RunningBackend } from '../../../backend/src/index.ts';
import { ApiKeyBannedError, createAnimalStoreClient, type AnimalStoreClientOptions } from '../../../gateway/client/client.ts';
import { request } from '../../helpers/backend.ts';
import { startStack, type TestStack } from '../../helpers/stack.ts';

// issue 16: the typed client against the real local stack (backend + gateway running kong.yml).
// Its sleep moves the stack's manual clock, so waits of a minute take no time.
const NOON = Date.UTC(2030, 0, 1, 12, 0, 0);

function clientOf(stack: TestStack, apiKey: string, extra: Partial<AnimalStoreClientOptions> = {}) {
  const sleeps: number[] = [];
  const statuses: number[] = [];
  const client = createAnimalStoreClient({
    baseUrl: `${stack.gateway.proxyUrl}/v1`,
    apiKey,
    now: stack.clock.now,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
      await stack.clock.advance(ms);
    },
    fetch: async (req) => {
      const response = await fetch(req);
      statuses.push(response.status);
      return response;
    },
    ...extra,
  });
  return { client, sleeps, statuses };
}

test('a 429 is waited out (Retry-After, on the gateway\'s clock) and the call then succeeds', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  await stack.clock.set(NOON + 30_000);
  const key = await stack.provision('client-busy', { minute: 2 });
  for (let i = 0; i < 2; i++) t.is((await stack.call('/v1/pets', { key })).status, 200);
  const { client, sleeps, statuses } = clientOf(stack, key);
  const { data, response } = await client.GET('/pets', { params: { query: { limit: 5 } } });
  t.deepEqual(data, []);
  t.deepEqual(statuses, [429, 200]);
  t.deepEqual(sleeps, [30_000 + 500], 'Retry-After 30 s plus half of the 1 s jitter');
  t.is(response.headers.get('x-ratelimit-remaining'), '1');
});

test('a banned key is surfaced at once as ApiKeyBannedError, with when the ban ends', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  await stack.clock.set(NOON + 5_000);
  const key = await stack.provision('client-banned', { minute: 1 });
  for (let i = 0; i < 22; i++) await stack.call('/v1/pets', { key }); // 1 ok, 21 times 429: banned
  const { client, sleeps, statuses } = clientOf(stack, key);
  const error = await t.throwsAsync(client.GET('/pets'), { instanceOf: ApiKeyBannedError });
  t.is(error.status, 429);
  t.is(error.retryAfterSeconds, 900);
  t.is(error.bannedUntil.getTime(), stack.clock.now() + 900_000);
  t.like(error.rateLimit, { limit: 1, remaining: 0 });
  t.deepEqual(statuses, [429], 'one request, no retry');
  t.deepEqual(sleeps, []);
});

test('while the backend is stopped the gateway answers 502, and the client backs off until it is back', async (t) => {
  const stack = await startStack();
  let restarted: RunningBackend | undefined;
  t.teardown(async () => {
    await restarted?.close();
    await stack.dispose();
  });
  const key = await stack.provision('client-patient', { minute: 100 });
  const { port, hostname } = new URL(stack.backend.url);
  await stack.backend.close();

  const { client, sleeps, statuses } = clientOf(stack, key, {
    sleep: async (ms) => {
      sleeps.push(ms);
      if (sleeps.length === 3) restarted = await startBackend({ host: hostname, port: Number(port), dataDir: join(stack.gateway.dir, 'backend') });
    },
  });
  const { data } = await client.GET('/pets');
  t.deepEqual(data, []);
  t.deepEqual(statuses, [502, 502, 502, 200]);
  t.deepEqual(sleeps, [100, 200, 400], 'full jitter: half of 200 ms · 2^n with random() = 0.5');
});

/** A proxy in front of the gateway that forwards everything but drops its first POST's response. */
async function droppingProxy(target: string) {
  let dropped = 0;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
      const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const body = Buffer.from(await upstream.arrayBuffer());
      if (req.method === 'POST' && dropped === 0) {
        dropped++;
        req.socket.destroy(); // the request went through; its response is lost on the way back
        return;
      }
      res.writeHead(upstream.status, Object.fromEntries([...upstream.headers].filter(([name]) => name !== 'content-length' && name !== 'transfer-encoding')));
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, dropped: () => dropped, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('a POST whose response is lost is retried with the same Idempotency-Key and creates exactly one pet', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  const proxy = await droppingProxy(stack.gateway.proxyUrl);
  t.teardown(() => proxy.close());
  const key = await stack.provision('client-retrier', { minute: 100 });
  const { client, sleeps } = clientOf(stack, key, { baseUrl: `${proxy.url}/v1` });

  const { data: pet, response } = await client.POST('/pets', { body: { name: 'Only Once', categoryId: 4 } });
  t.is(proxy.dropped(), 1);
  t.is(sleeps.length, 1);
  t.is(response.status, 201);
  t.is(response.headers.get('idempotent-replayed'), 'true');
  const all = await stack.call('/v1/pets?limit=100', { key });
  t.deepEqual(all.body, [pet]);
});

test('pagination follows Link rel="next" across 250 pets', async (t) => {
  const stack = await startStack();
  t.teardown(() => stack.dispose());
  for (let batch = 0; batch < 250; batch += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, i) => request(`${stack.backend.url}/pets`, { method: 'POST', json: { name: `Pet ${batch + i}`, categoryId: 1 } })));
  }
  const key = await stack.provision('client-reader', { minute: 100 });
  const { client, statuses } = clientOf(stack, key);

  const sizes: number[] = [];
  for await (const page of client.pages('/pets', { limit: 100 })) sizes.push(page.length);
  t.deepEqual(sizes, [100, 100, 50]);
  t.deepEqual(statuses, [200, 200, 200]);

  const ids: number[] = [];
  for await (const pet of client.items('/pets', { limit: 40, status: 'available' })) ids.push(pet.id);
  t.is(ids.length, 250);
  t.is(new Set(ids).size, 250);
  t.deepEqual(ids, [...ids].sort((a, b) => a - b));
});
