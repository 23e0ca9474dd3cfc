import { readFileSync } from 'node:fs';
import test from 'ava';
import { runCliInProcess } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { startPrometheus, type RunningPrometheus } from '../helpers/prometheus.ts';
import { ROUND, startUsageGateway, type UsageGateway } from '../helpers/usage-traffic.ts';

// `consumers usage` against the real data plane: gateway/kong.yml on a node whose Status API a
// real Prometheus scrapes every second, real requests through the proxy, consumers and plans
// from the gateway's Admin API; and the same node's /metrics read directly.
let gateway: UsageGateway;
let prometheus: RunningPrometheus;

test.before(async () => {
  gateway = await startUsageGateway();
  prometheus = await startPrometheus({ targets: [gateway.target], scrapeIntervalSeconds: 1 });
});
test.after.always(async () => {
  await prometheus?.dispose();
  await gateway?.dispose();
});

/** usage's row for a consumer after `rounds` rounds of ROUND. */
function expected(username: keyof typeof ROUND, rounds: number) {
  const round: Partial<Record<string, number>> = ROUND[username];
  const counts = ['2xx', '4xx', '429', '5xx', 'other', 'banned'].map((name) => (round[name] ?? 0) * rounds);
  return { username, requests: counts.reduce((sum, n) => sum + n, 0), counts };
}

const PLANS = { alice: ['enterprise', 9, 100000], bob: ['enterprise', 4, 100000], 'animal-store-anonymous': [null, 30, 500] } as const;

test.serial('Prometheus counts the window between two scrapes exactly; the node counts since it started', async (t) => {
  // Every series must exist before the window opens: Kong creates a series on its first
  // increment, and increase() cannot see what a series held at its first scrape.
  await gateway.round();
  await prometheus.nextScrape();
  const from = await prometheus.lastSampleTime('kong_http_requests_total');
  for (let i = 0; i < 3; i++) await gateway.round();
  await prometheus.nextScrape();
  const to = await prometheus.lastSampleTime('kong_http_requests_total');
  const env = { KONG_ADMIN_URL: gateway.adminUrl };
  const windowed = await runCliInProcess(
    ['usage', '--prometheus-url', prometheus.url, '--since', from.toISOString(), '--until', to.toISOString(), '--json'],
    env,
  );
  t.is(windowed.code, 0, windowed.stderr);
  t.is(windowed.stderr, '');
  type Row = Record<string, unknown>;
  const rows = JSON.parse(windowed.stdout).map(({ username, requests, plan, limit_minute: minute, limit_day: day, ...rest }: Row) => ({
    username,
    plan: [plan, minute, day],
    requests,
    counts: [rest['2xx'], rest['4xx'], rest['429'], rest['5xx'], rest.other, rest.banned],
  }));
  const want = (rounds: number) =>
    (['bob', 'alice', 'animal-store-anonymous'] as const)
      .map((username) => ({ ...expected(username, rounds), plan: [...PLANS[username]] }))
      .sort((a, b) => b.requests - a.requests);
  t.deepEqual(rows, want(3));

  const totals = await runCliInProcess(['usage', '--status-url', gateway.statusUrl, '--json'], env);
  t.is(totals.code, 0, totals.stderr);
  const totalRows = JSON.parse(totals.stdout).map(({ username, requests, note, ...rest }: Record<string, unknown>) => ({
    username,
    requests,
    note,
    counts: [rest['2xx'], rest['4xx'], rest['429'], rest['5xx'], rest.other, rest.banned],
  }));
  t.deepEqual(totalRows, want(4).map(({ username, requests, counts }) => ({ username, requests, note: 'totals since each node started', counts })));
});

test.serial('the default window (24 h up to now) counts what Prometheus saw change', async (t) => {
  const result = await runCliInProcess(['usage', 'alice', '--prometheus-url', prometheus.url, '--json'], { KONG_ADMIN_URL: gateway.adminUrl });
  t.is(result.code, 0, result.stderr);
  const [alice] = JSON.parse(result.stdout);
  const round = expected('alice', 1).requests;
  // The last scrape is not at "now", nor the first at the window's start: increase() scales what
  // it saw change (3 rounds after the series' first scrape; the round before it is not seen) up
  // to the edges, by up to half a scrape interval at the start and one at the end, over the few
  // seconds this test lasts. Over a day at 15 s scrapes the edges weigh the same ~22 s of traffic:
  // small against the day, which is why --until on a scrape time is exact and "now" is not.
  t.true(alice.requests >= 3 * round && alice.requests <= 6 * round, String(alice.requests));
  t.is(Date.parse(alice.to) - Date.parse(alice.from), 86_400_000);
});

test.serial("show with the local policy: the windows live in each node's memory", async (t) => {
  const result = await runCliInProcess(['show', 'alice'], { KONG_ADMIN_URL: gateway.adminUrl });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^ {2}plan {5}enterprise$/m);
  t.true(result.stdout.includes("  windows  not readable: policy local: the counters live in each Kong node's memory and are not readable from outside\n"), result.stdout);
});

test.serial("docs/usage.md's run from the nodes is this node's output after the four rounds above", async (t) => {
  const section = readFileSync(`${REPO_ROOT}docs/usage.md`, 'utf8');
  const [run] = [...section.matchAll(/```sh\n([\s\S]*?)```\n```text\n([\s\S]*?)```/g)].filter(([, commands]) => commands!.includes('--status-url'));
  const line = run![1]!.split('\n').find((l) => l.startsWith('npm run consumers -- '))!;
  const args = line.replace(/#.*$/, '').trim().split(/\s+/).slice(4);
  t.deepEqual(args, ['usage', '--status-url', 'http://127.0.0.1:8100']);
  const result = await runCliInProcess(['usage', '--status-url', gateway.statusUrl], { KONG_ADMIN_URL: gateway.adminUrl });
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout.replaceAll(gateway.statusUrl, 'http://127.0.0.1:8100'), run![2]!);
  const stderr = result.stderr.trim().replaceAll(gateway.statusUrl, 'http://127.0.0.1:8100');
  t.true(section.replace(/\n/g, ' ').includes(`(stderr: \`${stderr}\`.)`), stderr);
});
