import anyTest, { type TestFn } from 'ava';
import { runCliInProcess } from '../helpers/cli.ts';
import { startFakeKongAdmin, type FakeKongAdmin } from '../helpers/fake-kong-admin.ts';
import { startFakeKongNode, startPrometheus, type KongMetricsSource, type RunningPrometheus } from '../helpers/prometheus.ts';

// `consumers usage` while Prometheus scrapes a Kong node every second, and the same node's
// /metrics read directly. The node is a fake serving Kong's exposition text until the data plane
// serves its own: only the line marked below changes then (a KongMetricsSource that sends real
// requests through the gateway).
const test = anyTest as TestFn<{ admin: FakeKongAdmin; node: KongMetricsSource; prometheus: RunningPrometheus }>;

test.before(async (t) => {
  const admin = await startFakeKongAdmin();
  admin.addConsumer('alice');
  admin.addConsumer('bob', { tags: ['petstore-consumer', 'plan:pro'], plan: { minute: 300, day: 10000 } });
  admin.addConsumer('animal-store-anonymous', { tags: ['animal-store'], plan: { minute: 30, day: 500, limit_by: 'ip' } });
  const node: KongMetricsSource = await startFakeKongNode(); // ← the data plane's node here
  const prometheus = await startPrometheus({ targets: [node.target], scrapeIntervalSeconds: 1 });
  t.context = { admin, node, prometheus };
});
test.after.always(async (t) => {
  await t.context.prometheus?.dispose();
  await Promise.all([t.context.admin?.close(), t.context.node?.dispose()]);
});

/** One of every kind of request the test counts, times `n`. */
function traffic(node: KongMetricsSource, n: number) {
  node.requests({ consumer: 'alice', code: 200, n: 7 * n });
  node.requests({ consumer: 'alice', code: 404, n: 2 * n });
  node.requests({ consumer: 'alice', code: 429, n: 3 * n });
  node.requests({ consumer: 'bob', code: 201, n: 4 * n, route: 'animal-store-v1-get-pet' });
  node.bannedRequests('bob', 5 * n);
  node.requests({ consumer: 'animal-store-anonymous', code: 401, n: 6 * n });
  node.checksumFailures(2 * n);
}

test.serial('Prometheus counts the window between two scrapes exactly; the node counts since it started', async (t) => {
  const { node, prometheus, admin } = t.context;
  // Every series must exist before the window opens: Kong creates a series on its first
  // increment, and increase() cannot see what a series held at its first scrape.
  traffic(node, 1);
  await prometheus.nextScrape();
  const from = await prometheus.lastSampleTime('kong_http_requests_total');
  traffic(node, 3);
  await prometheus.nextScrape();
  const to = await prometheus.lastSampleTime('kong_http_requests_total');
  const env = { KONG_ADMIN_URL: admin.url };
  const windowed = await runCliInProcess(
    ['usage', '--prometheus-url', prometheus.url, '--since', from.toISOString(), '--until', to.toISOString(), '--json'],
    env,
  );
  t.is(windowed.code, 0, windowed.stderr);
  t.is(windowed.stderr, '');
  const rows = JSON.parse(windowed.stdout).map(({ username, requests, plan, ...rest }: Record<string, unknown>) => ({
    username,
    plan,
    requests,
    counts: [rest['2xx'], rest['4xx'], rest['429'], rest['5xx'], rest.other, rest.banned],
  }));
  t.deepEqual(rows, [
    { username: 'bob', plan: 'pro', requests: 27, counts: [12, 0, 0, 0, 0, 15] },
    { username: 'alice', plan: 'free', requests: 36, counts: [21, 6, 9, 0, 0, 0] },
    { username: 'animal-store-anonymous', plan: null, requests: 18, counts: [0, 18, 0, 0, 0, 0] },
  ].sort((a, b) => b.requests - a.requests));

  const totals = await runCliInProcess(['usage', '--status-url', node.statusUrl, '--json'], env);
  t.is(totals.code, 0, totals.stderr);
  t.like(JSON.parse(totals.stdout), [
    { username: 'alice', requests: 48, '2xx': 28, '4xx': 8, '429': 12, note: 'totals since each node started' },
    { username: 'bob', requests: 36, '2xx': 16, banned: 20 },
    { username: 'animal-store-anonymous', requests: 24, '4xx': 24 },
  ]);
});

test.serial('the default window (24 h up to now) counts what Prometheus saw change', async (t) => {
  const { prometheus, admin } = t.context;
  const result = await runCliInProcess(['usage', 'alice', '--prometheus-url', prometheus.url, '--json'], { KONG_ADMIN_URL: admin.url });
  t.is(result.code, 0, result.stderr);
  const [alice] = JSON.parse(result.stdout);
  // The last scrape is not at "now", nor the first at the window's start: increase() scales what
  // it saw change (36 requests after the series' first scrape; the 12 before it are not seen) up
  // to the edges, by up to half a scrape interval at the start and one at the end, over the few
  // seconds this test lasts. Over a day at 15 s scrapes the edges weigh the same ~22 s of traffic:
  // small against the day, which is why --until on a scrape time is exact and "now" is not.
  t.true(alice.requests >= 36 && alice.requests <= 72, String(alice.requests));
  t.is(Date.parse(alice.to) - Date.parse(alice.from), 86_400_000);
});
