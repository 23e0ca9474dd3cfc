// The dashboard's usage charts (issue 32): one account's requests per hour over 24 h and per UTC
// day over 7 days, by status class. From Prometheus (compose): the library's queries against a
// real Prometheus holding recorded Kong counters, and the portal's JSON against a real Prometheus
// scraping a real gateway. From the portal's own samples of the Status API (`npm start`): against
// the real gateway. Neither ever gives one account another's requests.
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import test from 'ava';
import { CHART_RANGES, PrometheusApi, prometheusRequestSeries, type RequestSeries } from '../../packages/usage/index.ts';
import { pollUntil } from '../helpers/poll.ts';
import { PortalBrowser, shownKey, startTestPortal, type TestPortal } from '../helpers/portal.ts';
import { backfill, startPrometheus, type RunningPrometheus } from '../helpers/prometheus.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';
import { historyOpenMetrics } from '../scripts/usage-history.ts';

const PASSWORD = 'correct horse battery staple';
const [HOURS, DAYS] = CHART_RANGES;

let recorded: RunningPrometheus;
let tsdb: string;
let stack: TestStack;
let live: RunningPrometheus;
let fromPrometheus: TestPortal;
let fromSamples: TestPortal;
let ips = 0;

test.before(async () => {
  tsdb = await backfill(historyOpenMetrics());
  recorded = await startPrometheus({ storageDir: tsdb });
  stack = await startStack({ node: { statusListen: '127.0.0.1:0' } });
  live = await startPrometheus({ targets: [new URL(stack.gateway.statusUrl!).host], scrapeIntervalSeconds: 1 });
  const common = { adminUrl: stack.gateway.adminUrl, apiUrl: `${stack.gateway.proxyUrl}/v1`, signUp: 'open' as const };
  fromPrometheus = await startTestPortal({ ...common, prometheusUrl: new URL(live.url) });
  fromSamples = await startTestPortal({ ...common, statusUrls: [new URL(stack.gateway.statusUrl!)] });
});

test.after.always(async () => {
  await fromPrometheus?.dispose();
  await fromSamples?.dispose();
  await live?.dispose();
  await stack?.dispose();
  await recorded?.dispose();
  if (tsdb) rmSync(dirname(tsdb), { recursive: true, force: true });
});

type Bucket = RequestSeries['buckets'][number];
const at = (iso: string) => Date.parse(iso);
/** The buckets that had requests, as [bucket start, counts without zeros]. */
const busy = (series: RequestSeries) =>
  series.buckets
    .filter((b) => b.counts.requests > 0)
    .map((b: Bucket) => [new Date(b.from).toISOString(), Object.fromEntries(Object.entries(b.counts).filter(([, n]) => n > 0))]);

test('from Prometheus: per hour over 24 h and per UTC day over 7 days, by class, one consumer only (recorded counters, usage-history.ts)', async (t) => {
  const prometheus = new PrometheusApi(new URL(recorded.url));
  const now = at('2026-03-03T12:30:00Z');
  const aliceDays = await prometheusRequestSeries(prometheus, 'alice', DAYS, now);
  t.is(aliceDays.buckets.length, 7);
  t.deepEqual(
    aliceDays.buckets.map((b) => [b.from, b.to]),
    [25, 26, 27, 28].map((d) => [at(`2026-02-${d}T00:00:00Z`), at(`2026-02-${d}T00:00:00Z`) + 86_400_000]).concat([
      [at('2026-03-01T00:00:00Z'), at('2026-03-02T00:00:00Z')],
      [at('2026-03-02T00:00:00Z'), at('2026-03-03T00:00:00Z')],
      [at('2026-03-03T00:00:00Z'), now],
    ]),
    'UTC days, the last one up to now',
  );
  // the CLI's `--by day` export of the same data (docs/usage.md): 55, 50, 2; node a restarted on day 2
  t.deepEqual(busy(aliceDays), [
    ['2026-03-01T00:00:00.000Z', { requests: 55, '2xx': 40, '4xx': 3, '429': 12 }],
    ['2026-03-02T00:00:00.000Z', { requests: 50, '2xx': 50 }],
    ['2026-03-03T00:00:00.000Z', { requests: 2, '5xx': 2 }],
  ]);

  const aliceHours = await prometheusRequestSeries(prometheus, 'alice', HOURS, now);
  t.is(aliceHours.buckets.length, 24);
  t.is(aliceHours.buckets[0]!.from, at('2026-03-02T13:00:00Z'));
  t.deepEqual(aliceHours.buckets.at(-1)!.to, now);
  t.deepEqual(busy(aliceHours), [
    ['2026-03-02T14:00:00.000Z', { requests: 15, '2xx': 15 }],
    ['2026-03-02T15:00:00.000Z', { requests: 10, '2xx': 10 }],
    ['2026-03-03T01:00:00.000Z', { requests: 2, '5xx': 2 }],
  ]);

  // bob's ban: refused while banned counts as his, though Kong counts those 429s under no consumer
  t.deepEqual(busy(await prometheusRequestSeries(prometheus, 'bob', HOURS, now)), [
    ['2026-03-02T16:00:00.000Z', { requests: 30, banned: 30 }],
    ['2026-03-02T17:00:00.000Z', { requests: 8, '2xx': 8 }],
  ]);
  t.deepEqual(busy(await prometheusRequestSeries(prometheus, 'nobody"}or{consumer=~".+', DAYS, now)), [], 'the name is a PromQL string, not a selector');
});

/** Signs up on `portal` and returns the browser (signed in) and the account's key. */
async function account(portal: TestPortal, email: string): Promise<{ browser: PortalBrowser; key: string; consumer: string }> {
  const browser = new PortalBrowser(portal.url, `198.51.100.${++ips}`);
  await browser.get('/portal/signup');
  const page = await browser.post('/portal/signup', { email, name: 'Chart Tester', password: PASSWORD });
  const key = shownKey(page);
  if (page.status !== 201 || !key) throw new Error(`sign-up ${email}: ${page.status}`);
  const consumers = await stack.admin('/consumers?tags=petstore-consumer');
  const id = portal.audit.map((line) => JSON.parse(line)).find((e) => e.action === 'sign-up' && e.ip === browser.ip).account;
  const consumer = consumers.body.data.find((c: any) => c.custom_id === id).username as string;
  return { browser, key, consumer };
}

async function send(key: string, path: string, n: number, expected: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const response = await stack.call(path, { key });
    if (response.status !== expected) throw new Error(`GET ${path}: ${response.status}, expected ${expected}`);
  }
}

interface ChartJson {
  source: string;
  note: string;
  ranges: RequestSeries[];
}

async function charts(browser: PortalBrowser): Promise<{ status: number; json: ChartJson; text: string }> {
  const page = await browser.get('/portal/usage/requests.json');
  return { status: page.status, json: JSON.parse(page.text) as ChartJson, text: page.text };
}

/** A range's buckets added up, per class. */
const totals = (series: RequestSeries) => {
  const sum: Record<string, number> = {};
  for (const bucket of series.buckets) for (const [k, n] of Object.entries(bucket.counts)) sum[k] = (sum[k] ?? 0) + n;
  return sum;
};

test('the chart data needs a session: 401 in the API error shape', async (t) => {
  const anonymous = new PortalBrowser(fromPrometheus.url, '198.51.100.250');
  const answer = await charts(anonymous);
  t.is(answer.status, 401);
  t.deepEqual(answer.json, { code: 'unauthorized', message: 'Sign in to see your usage.', status: 401 } as never);
});

test('from Prometheus scraping the real gateway: an account sees its own requests only, never another account’s', async (t) => {
  const ada = await account(fromPrometheus, 'ada-chart@example.com');
  const bob = await account(fromPrometheus, 'bob-chart@example.com');
  // Kong makes a series (per code) on its first increment, which increase() cannot see: one request each first
  await send(ada.key, '/v1/pets', 1, 200);
  await send(ada.key, '/v1/no-such-thing', 1, 404);
  await send(bob.key, '/v1/pets', 1, 200);
  await live.nextScrape();
  await send(bob.key, '/v1/pets', 12, 200);
  await send(ada.key, '/v1/no-such-thing', 3, 404);
  // a few more scrapes: increase() extrapolates by up to half an interval at each edge of what it saw
  for (let i = 0; i < 3; i++) await live.nextScrape();

  const adaCharts = await charts(ada.browser);
  t.is(adaCharts.status, 200);
  t.is(adaCharts.json.source, 'prometheus');
  t.deepEqual(
    adaCharts.json.ranges.map((r) => [r.range, r.buckets.length, r.stepSeconds]),
    [
      ['24h', 24, 3600],
      ['7d', 7, 86400],
    ],
  );
  const bobCharts = await charts(bob.browser);
  for (const range of [0, 1]) {
    const mine = totals(adaCharts.json.ranges[range]!);
    const theirs = totals(bobCharts.json.ranges[range]!);
    // increase() extrapolates to the bucket's edges: about 3 and 12, never the other's
    t.true(mine['4xx']! >= 2 && mine['4xx']! <= 6, `ada's 404s: ${mine['4xx']}`);
    t.true(mine['2xx']! <= 2, `ada's 2xx holds none of bob's 12: ${mine['2xx']}`);
    t.true(theirs['2xx']! >= 10 && theirs['2xx']! <= 20, `bob's 200s: ${theirs['2xx']}`);
    t.is(theirs['4xx'], 0, "bob's holds none of ada's 404s");
  }
  t.false(adaCharts.text.includes(bob.consumer), "ada's answer never names bob's consumer");
  t.false(bobCharts.text.includes(ada.consumer));
});

test('from the portal’s samples of the Status API (npm start): exact counts since the first sample, per account', async (t) => {
  const ada = await account(fromSamples, 'ada-sampled@example.com');
  const bob = await account(fromSamples, 'bob-sampled@example.com');
  const before = await charts(ada.browser); // the portal has sampled the gateway before these requests
  t.is(before.status, 200);
  t.is(before.json.source, 'portal-samples');
  t.regex(before.json.note, /^Sampled by this portal from the gateway since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: requests before then/);
  await send(ada.key, '/v1/pets', 2, 200);
  await send(ada.key, '/v1/no-such-thing', 1, 404);
  await send(bob.key, '/v1/pets', 5, 200);

  let adaCharts = before;
  await pollUntil('the portal to sample ada’s 3 requests', async () => {
    adaCharts = await charts(ada.browser);
    return totals(adaCharts.json.ranges[0]!).requests === 3;
  });
  const bobCharts = await charts(bob.browser);
  for (const range of [0, 1]) {
    t.like(totals(adaCharts.json.ranges[range]!), { requests: 3, '2xx': 2, '4xx': 1, '429': 0 });
    t.like(totals(bobCharts.json.ranges[range]!), { requests: 5, '2xx': 5, '4xx': 0 });
  }
  t.false(adaCharts.text.includes(bob.consumer), "ada's answer never names bob's consumer");
});
