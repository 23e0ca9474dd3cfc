import test from 'ava';
import { ManualClock } from '../helpers/clock.ts';
import { startFixture, type Fixture } from '../helpers/fixture.ts';

// Expectations from kong/plugins/rate-limiting/handler.lua (Kong 3.9.1), local policy.
let f: Fixture;
let clock: ManualClock;
const T0 = Date.UTC(2030, 5, 15, 10, 30, 20); // 10:30:20 UTC

test.before(async () => {
  clock = new ManualClock(T0);
  f = await startFixture(
    `
_format_version: "3.0"
services:
  - name: echo
    url: \${UPSTREAM}
    routes:
      - name: ip
        paths: [/ip]
        plugins:
          - name: rate-limiting
            config: { second: 2, hour: 3, limit_by: ip }
      - name: custom
        paths: [/custom]
        plugins:
          - name: rate-limiting
            config: { minute: 1, error_code: 503, error_message: slow down }
      - name: by-credential
        paths: [/credential]
        plugins:
          - name: key-auth
          - name: rate-limiting
            config: { minute: 1, limit_by: credential }
      - name: hidden
        paths: [/hidden]
        plugins:
          - name: rate-limiting
            config: { minute: 1, hide_client_headers: true }
consumers:
  - username: two-keys
    keyauth_credentials: [{ key: k-one }, { key: k-two }]
`,
    { clock },
  );
});
test.after.always(async () => {
  await f?.dispose();
});

test.serial('per-window headers, RateLimit-* for the most constraining window, 429 with Retry-After', async (t) => {
  await clock.set(T0);
  const first = await f.call('/ip');
  t.is(first.status, 200);
  t.is(first.headers.get('x-ratelimit-limit-second'), '2');
  t.is(first.headers.get('x-ratelimit-remaining-second'), '1');
  t.is(first.headers.get('x-ratelimit-limit-hour'), '3');
  t.is(first.headers.get('x-ratelimit-remaining-hour'), '2');
  // second: 1 left, hour: 2 left -> the second window is the most constraining; its reset is 1 s
  t.is(first.headers.get('ratelimit-limit'), '2');
  t.is(first.headers.get('ratelimit-remaining'), '1');
  t.is(first.headers.get('ratelimit-reset'), '1');
  const second = await f.call('/ip');
  t.is(second.headers.get('ratelimit-remaining'), '0');
  const third = await f.call('/ip');
  t.is(third.status, 429);
  t.is(third.body.message, 'API rate limit exceeded');
  t.is(third.headers.get('retry-after'), '1');

  await clock.advance(1000); // next second: the hour window (1 left) now constrains most
  const fourth = await f.call('/ip');
  t.is(fourth.status, 200);
  t.is(fourth.headers.get('ratelimit-limit'), '3');
  t.is(fourth.headers.get('ratelimit-remaining'), '0');
  t.is(fourth.headers.get('ratelimit-reset'), String(3600 - (30 * 60 + 21)));
  const fifth = await f.call('/ip');
  t.is(fifth.status, 429);
  t.is(fifth.headers.get('retry-after'), String(3600 - (30 * 60 + 21)));
});

test.serial('error_code and error_message are configurable', async (t) => {
  await f.call('/custom');
  const limited = await f.call('/custom');
  t.is(limited.status, 503);
  t.is(limited.body.message, 'slow down');
});

test.serial('hide_client_headers hides every rate-limit header, Retry-After included', async (t) => {
  const ok = await f.call('/hidden');
  t.is(ok.headers.get('ratelimit-limit'), null);
  t.is(ok.headers.get('x-ratelimit-limit-minute'), null);
  const limited = await f.call('/hidden');
  t.is(limited.status, 429);
  t.is(limited.headers.get('retry-after'), null);
});

test.serial('a rejected request is not counted', async (t) => {
  await clock.set(Date.UTC(2030, 5, 15, 11, 0, 0));
  await f.call('/ip');
  await f.call('/ip');
  for (let i = 0; i < 5; i++) t.is((await f.call('/ip')).status, 429);
  await clock.advance(1000);
  const after = await f.call('/ip');
  t.is(after.status, 200);
  t.is(after.headers.get('x-ratelimit-remaining-hour'), '0');
});

test.serial('limit_by credential counts each key of a consumer separately', async (t) => {
  await clock.set(Date.UTC(2030, 5, 15, 12, 0, 0));
  t.is((await f.call('/credential', { headers: { apikey: 'k-one' } })).status, 200);
  t.is((await f.call('/credential', { headers: { apikey: 'k-one' } })).status, 429);
  t.is((await f.call('/credential', { headers: { apikey: 'k-two' } })).status, 200);
});
