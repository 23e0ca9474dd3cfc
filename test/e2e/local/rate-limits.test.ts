import test from 'ava';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { startStack, type TestStack } from '../../helpers/stack.ts';

// Rate-limit headers: X-RateLimit-* are derived by animal-store-edge from Kong's rate-limiting
// RateLimit-* headers (kong/plugins/rate-limiting/handler.lua, 3.9.1): the most constraining
// window is the one with the fewest requests left; Reset counts from the window's UTC start.
let stack: TestStack;

const NOON = Date.UTC(2030, 0, 1, 12, 0, 0);

test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.dispose();
});

const unix = (ms: number) => Math.floor(ms / 1000);

test.serial('Remaining drops by one per request, 429 comes exactly after the limit, Reset is the minute boundary', async (t) => {
  await stack.clock.set(NOON + 10_000); // 12:00:10
  const key = await stack.provision('rl-counting', { minute: 5, day: 1000 });
  for (let remaining = 4; remaining >= 0; remaining--) {
    const response = await stack.call('/v1/pets', { key });
    t.is(response.status, 200);
    t.is(response.headers.get('x-ratelimit-limit'), '5');
    t.is(response.headers.get('x-ratelimit-remaining'), String(remaining));
    t.is(response.headers.get('x-ratelimit-reset'), String(unix(NOON + 60_000)));
  }
  const limited = await stack.call('/v1/pets', { key });
  t.is(limited.status, 429);
  t.is(limited.body.code, 'rate_limit_exceeded');
  t.is(limited.headers.get('retry-after'), '50');
  t.is(limited.headers.get('x-ratelimit-remaining'), '0');
  t.is(limited.headers.get('x-ratelimit-reset'), String(unix(NOON + 60_000)));
  t.deepEqual(contractProblems('GET', '/pets', limited, { checkHeaders: true }), []);

  await stack.clock.set(NOON + 60_000); // the next minute: a fresh window
  const next = await stack.call('/v1/pets', { key });
  t.is(next.status, 200);
  t.is(next.headers.get('x-ratelimit-remaining'), '4');
  t.is(next.headers.get('x-ratelimit-reset'), String(unix(NOON + 120_000)));
});

test.serial('on a tie the longer window is reported, so Retry-After waits for the day to end', async (t) => {
  await stack.clock.set(NOON);
  // Kong refuses a day limit below the minute limit (rate-limiting schema.lua), so tie them.
  const key = await stack.provision('rl-day', { minute: 3, day: 3 });
  const first = await stack.call('/v1/pets', { key });
  t.is(first.headers.get('x-ratelimit-limit'), '3');
  t.is(first.headers.get('x-ratelimit-remaining'), '2');
  t.is(first.headers.get('x-ratelimit-reset'), String(unix(Date.UTC(2030, 0, 2))));
  await stack.call('/v1/pets', { key });
  await stack.call('/v1/pets', { key });
  const limited = await stack.call('/v1/pets', { key });
  t.is(limited.status, 429);
  t.is(limited.headers.get('retry-after'), String(12 * 3600));
});

test.serial('requests without a key are limited per client IP by the anonymous consumer', async (t) => {
  await stack.clock.set(NOON + 3600_000);
  const plans = parse(readFileSync(new URL('../../../gateway/plans.yaml', import.meta.url), 'utf8'));
  const limit = plans.anonymous.minute as number;
  for (let i = 0; i < limit; i++) t.is((await stack.call('/v1/pets')).status, 401);
  const limited = await stack.call('/v1/pets');
  t.is(limited.status, 429);
  t.is(limited.body.code, 'rate_limit_exceeded');
  t.is(limited.headers.get('x-ratelimit-limit'), String(limit));
});

test.serial('a consumer without a plan plugin gets the free plan from the global fallback', async (t) => {
  await stack.clock.set(NOON + 7200_000);
  const key = await stack.provision('rl-no-plan');
  const plans = parse(readFileSync(new URL('../../../gateway/plans.yaml', import.meta.url), 'utf8'));
  const response = await stack.call('/v1/pets', { key });
  t.is(response.headers.get('x-ratelimit-limit'), String(plans.plans.free.minute));
});
