import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { ApiError, ApiKeyBannedError, NetworkError, createAnimalStoreClient, type RetryOptions } from '../../gateway/client/client.ts';
import { DEFAULT_RETRY } from '../../gateway/client/backoff.ts';
import { retryingFetch } from '../../gateway/client/retrying-fetch.ts';
import { ManualClock } from '../helpers/clock.ts';

// The client's retry policy against a scripted HTTP server: each request takes the next answer.
type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | 'drop';
interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: string }

async function scripted(t: { teardown(fn: () => unknown): void }, answers: Answer[]) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const answer = answers.shift() ?? { status: 500, body: { code: 'internal_error', message: 'script ran out', status: 500 } };
      if (answer === 'drop') return req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { seen, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

function clientFor(baseUrl: string, retry: RetryOptions = {}, random = () => 0.5) {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const sleeps: number[] = [];
  const client = createAnimalStoreClient({
    baseUrl,
    apiKey: 'ask_test',
    retry,
    now: clock.now,
    random,
    sleep: async (ms) => {
      sleeps.push(ms);
      await clock.advance(ms);
    },
  });
  return { client, sleeps, clock };
}

const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
const error = (status: number, code: string) => ({ code, message: code, status });
const limited = (retryAfter: string) => ({ status: 429, headers: { 'retry-after': retryAfter, 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1893499260' }, body: error(429, 'rate_limit_exceeded') });

test('502, 503, 504 and a dropped connection back off exponentially with full jitter, with the bearer key each time', async (t) => {
  const { seen, baseUrl } = await scripted(t, [{ status: 502, body: error(502, 'bad_gateway') }, { status: 503 }, 'drop', { status: 504 }, { status: 200, body: [pet] }]);
  const { client, sleeps } = clientFor(baseUrl, { baseDelayMs: 100, maxDelayMs: 1000 }, () => 0.999);
  const { data } = await client.GET('/pets');
  t.deepEqual(data, [pet]);
  t.deepEqual(sleeps, [99, 199, 399, 799]); // just under 100·2^n: uniform in [0, min(cap, base·2^n))
  t.true(seen.every((request) => request.headers.authorization === 'Bearer ask_test'));
});

test('the wait never exceeds the cap, and the last failure is thrown after maxAttempts', async (t) => {
  const { seen, baseUrl } = await scripted(t, Array(4).fill({ status: 503, headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '1893499260' }, body: error(503, 'service_unavailable') }));
  const { client, sleeps } = clientFor(baseUrl, { baseDelayMs: 100, maxDelayMs: 150, maxAttempts: 4 }, () => 0.999);
  const thrown = await t.throwsAsync(client.GET('/pets'), { instanceOf: ApiError });
  t.like(thrown, { status: 503, code: 'service_unavailable', rateLimit: { limit: 60, remaining: 7, reset: new Date(1893499260_000) } });
  t.is(seen.length, 4);
  t.deepEqual(sleeps, [99, 149, 149]);
});

test('no retry starts that would end after the time budget', async (t) => {
  const { seen, baseUrl } = await scripted(t, Array(10).fill({ status: 503 }));
  const { client, sleeps } = clientFor(
    baseUrl,
    { baseDelayMs: 1000, maxDelayMs: 100_000, maxAttempts: 10, timeBudgetMs: 5000 },
    () => 0.999,
  );
  await t.throwsAsync(client.GET('/pets'), { instanceOf: ApiError });
  t.deepEqual(sleeps, [999, 1998]); // a third wait (up to 3996) would end at ~7 s
  t.is(seen.length, 3);
});

test('a 429 rate_limit_exceeded waits Retry-After plus jitter, never less', async (t) => {
  const { baseUrl } = await scripted(t, [limited('7'), { status: 200, body: [] }]);
  const { client, sleeps } = clientFor(baseUrl, { retryAfterJitterMs: 1000 }, () => 0.25);
  await client.GET('/pets');
  t.deepEqual(sleeps, [7250]);
});

test('a Retry-After over the cap is not waited out: the 429 is the answer', async (t) => {
  const { seen, baseUrl } = await scripted(t, [limited('120')]);
  const { client, sleeps } = clientFor(baseUrl, { maxRetryAfterMs: 60_000 });
  const thrown = await t.throwsAsync(client.GET('/pets'), { instanceOf: ApiError });
  t.is(thrown.code, 'rate_limit_exceeded');
  t.is(thrown.retryAfterSeconds, 120);
  t.deepEqual(sleeps, []);
  t.is(seen.length, 1);
});

test('api_key_banned is thrown at once, carrying when the ban ends', async (t) => {
  const { seen, baseUrl } = await scripted(t, [{ status: 429, headers: { 'retry-after': '900' }, body: error(429, 'api_key_banned') }]);
  const { client, sleeps, clock } = clientFor(baseUrl);
  const thrown = await t.throwsAsync(client.GET('/pets'), { instanceOf: ApiKeyBannedError });
  t.is(thrown.bannedUntil.getTime(), clock.now() + 900_000);
  t.deepEqual([seen.length, sleeps.length], [1, 0]);
});

test('a POST carries one Idempotency-Key per call, the same on every attempt', async (t) => {
  const { seen, baseUrl } = await scripted(t, ['drop', { status: 503 }, { status: 201, body: pet }, { status: 201, body: pet }]);
  const { client } = clientFor(baseUrl);
  await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
  await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
  const keys = seen.map((request) => String(request.headers['idempotency-key']));
  t.is(keys.length, 4);
  t.regex(keys[0] ?? '', /^[0-9a-f-]{36}$/);
  t.deepEqual(keys.slice(0, 3), [keys[0], keys[0], keys[0]]);
  t.not(keys[3], keys[0]);
  t.true(seen.every((request) => request.body === '{"name":"Rex","categoryId":1}'));
});

test('a POST without an Idempotency-Key is never repeated after a 5xx or a lost response', async (t) => {
  const { seen, baseUrl } = await scripted(t, ['drop', { status: 503 }]);
  const transport = { fetch: (request: Request) => fetch(request), now: Date.now, random: () => 0, sleep: async () => t.fail('no wait expected') };
  const send = retryingFetch({ ...DEFAULT_RETRY }, transport);
  const post = () => new Request(`${baseUrl}/pets`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
  await t.throwsAsync(send(post()), { instanceOf: NetworkError, message: /got no response after 1 attempt/ });
  t.is((await send(post())).status, 503);
  t.is(seen.length, 2);
});

test('409 idempotency_key_in_progress waits Retry-After and asks again', async (t) => {
  const { seen, baseUrl } = await scripted(t, [{ status: 409, headers: { 'retry-after': '1' }, body: error(409, 'idempotency_key_in_progress') }, { status: 201, headers: { 'idempotent-replayed': 'true' }, body: pet }]);
  const { client, sleeps } = clientFor(baseUrl, {}, () => 0);
  const { data, response } = await client.POST('/pets', { body: { name: 'Rex', categoryId: 1 } });
  t.deepEqual(data, pet);
  t.is(response.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(sleeps, [1000]);
  t.is(seen.length, 2);
});

test('an AbortSignal stops the call during a backoff wait', async (t) => {
  const { seen, baseUrl } = await scripted(t, [{ status: 503 }, { status: 200, body: [] }]);
  const controller = new AbortController();
  const client = createAnimalStoreClient({
    baseUrl,
    apiKey: 'ask_test',
    sleep: (_ms, signal) =>
      new Promise((_resolve, reject) => {
        signal!.addEventListener('abort', () => reject(signal!.reason as Error));
        controller.abort(new Error('caller gave up'));
      }),
  });
  await t.throwsAsync(client.GET('/pets', { signal: controller.signal }), { message: 'caller gave up' });
  t.is(seen.length, 1);
});
