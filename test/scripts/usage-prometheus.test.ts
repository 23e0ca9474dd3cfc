import { readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import test from 'ava';
import { usageQueries } from '../../packages/usage/index.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { startFakeKongAdmin, type FakeKongAdmin } from '../helpers/fake-kong-admin.ts';
import { backfill, startPrometheus, type RunningPrometheus } from '../helpers/prometheus.ts';
import { historyOpenMetrics } from './usage-history.ts';

// `consumers usage` against a real Prometheus (Debian's 2.42) holding three days of two Kong
// nodes' counters (usage-history.ts, backfilled with promtool): windows, days, restarts, nodes.
let admin: FakeKongAdmin;
let prometheus: RunningPrometheus;
let tsdb: string;
let run: (args: string[], env?: NodeJS.ProcessEnv) => ReturnType<typeof runCliInProcess>;

test.before(async () => {
  admin = await startFakeKongAdmin();
  admin.addConsumer('alice');
  admin.addConsumer('bob', { tags: ['petstore-consumer', 'plan:pro'], plan: { minute: 300, day: 10000 } });
  admin.addConsumer('carol', { tags: ['petstore-consumer', 'plan:enterprise'], plan: { minute: 5000, day: 2000000 } });
  admin.addConsumer('animal-store-anonymous', { tags: ['animal-store'], plan: { minute: 30, day: 500, limit_by: 'ip' } });
  admin.addConsumer('inventory-warehouse', { tags: ['team-inventory'], plan: { minute: 10, day: 100 } });
  tsdb = await backfill(historyOpenMetrics());
  prometheus = await startPrometheus({ storageDir: tsdb });
  run = (args, env = {}) => runCliInProcess(['usage', '--prometheus-url', prometheus.url, ...args], { KONG_ADMIN_URL: admin.url, ...env });
});
test.after.always(async () => {
  await Promise.all([admin?.close(), prometheus?.dispose()]);
  if (tsdb) rmSync(dirname(tsdb), { recursive: true, force: true });
});

test('the queries usage sends: increase() over exactly the window, evaluated at its end', (t) => {
  const window = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-03-04T00:00:00Z') };
  t.deepEqual(usageQueries(window), {
    requests: 'sum by (consumer, code) (increase(kong_http_requests_total{service=~"animal-store-.+"}[259200000ms]))',
    banned: 'sum by (consumer) (increase(kong_animal_store_edge_banned_requests_total[259200000ms]))',
  });
  t.deepEqual(usageQueries(window, 'o"brien\\x'), {
    requests: 'sum by (consumer, code) (increase(kong_http_requests_total{service=~"animal-store-.+",consumer="o\\"brien\\\\x"}[259200000ms]))',
    banned: 'sum by (consumer) (increase(kong_animal_store_edge_banned_requests_total{consumer="o\\"brien\\\\x"}[259200000ms]))',
  });
});

test('table: three days, both nodes summed, a restart of one counted across', async (t) => {
  const result = await run(['--since', '3d', '--until', '2026-03-04']);
  t.is(result.code, 0, result.stderr);
  t.is(
    result.stdout,
    [
      `requests from 2026-03-01T00:00:00Z to 2026-03-04T00:00:00Z (Prometheus at ${prometheus.url})`,
      'USERNAME                PLAN  LIMITS              REQUESTS  2XX  4XX  429  5XX  OTHER  BANNED',
      '----------------------  ----  ------------------  --------  ---  ---  ---  ---  -----  ------',
      'bob                     pro   300/min, 10000/day  158       128  0    0    0    0      30',
      'alice                   free  60/min, 1000/day    107       90   3    12   2    0      0',
      'animal-store-anonymous  -     30/min, 500/day     5         0    5    0    0    0      0',
      'dave                    -     -                   4         4    0    0    0    0      0',
      '',
    ].join('\n'),
  );
  t.is(result.stderr, 'note: consumer dave is not in the Admin API (deleted?): its usage is shown without a plan\n');
});

test('--by day --format csv: the billing export, one row per consumer per UTC day', async (t) => {
  const result = await run(['--since', '3d', '--until', '2026-03-04', '--by', 'day', '--format', 'csv']);
  t.is(result.code, 0, result.stderr);
  t.is(
    result.stdout,
    [
      'day,username,plan,limit_minute,limit_day,requests,2xx,4xx,429,5xx,other,banned,from,to,note',
      '2026-03-01,alice,free,60,1000,55,40,3,12,0,0,0,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,',
      '2026-03-02,alice,free,60,1000,50,50,0,0,0,0,0,2026-03-02T00:00:00Z,2026-03-03T00:00:00Z,',
      '2026-03-03,alice,free,60,1000,2,0,0,0,2,0,0,2026-03-03T00:00:00Z,2026-03-04T00:00:00Z,',
      '2026-03-01,animal-store-anonymous,,30,500,5,0,5,0,0,0,0,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,',
      '2026-03-01,bob,pro,300,10000,20,20,0,0,0,0,0,2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,',
      '2026-03-02,bob,pro,300,10000,38,8,0,0,0,0,30,2026-03-02T00:00:00Z,2026-03-03T00:00:00Z,',
      // 100 requests at 23:57:30, scraped at 00:00:00 of the next day: the scrape's day is theirs.
      '2026-03-03,bob,pro,300,10000,100,100,0,0,0,0,0,2026-03-03T00:00:00Z,2026-03-04T00:00:00Z,',
      '2026-03-03,dave,,,,4,4,0,0,0,0,0,2026-03-03T00:00:00Z,2026-03-04T00:00:00Z,',
      '',
    ].join('\n'),
  );
});

test("another team's consumers and services are not in the billing export", async (t) => {
  const result = await run(['--since', '3d', '--until', '2026-03-04', '--by', 'day', '--json']);
  t.is(result.code, 0, result.stderr);
  const rows = JSON.parse(result.stdout) as Array<{ day: string; username: string; requests: number }>;
  t.false(rows.some((r) => r.username.startsWith('inventory-')));
  // alice's 5 requests on their service (day 3) are not hers on our API
  t.like(rows.find((r) => r.username === 'alice' && r.day === '2026-03-03'), { requests: 2 });
  const one = await run(['inventory-warehouse', '--since', '3d', '--until', '2026-03-04']);
  t.is(one.code, 1);
  t.regex(one.stderr, /^error: consumer inventory-warehouse is another team's/);
});

test('--by day: the days the window touches, whole, the last one up to --until', async (t) => {
  const result = await run(['alice', '--since', '1d', '--until', '2026-03-02T12:00:00Z', '--by', 'day', '--json']);
  t.is(result.code, 0, result.stderr);
  t.deepEqual(JSON.parse(result.stdout), [
    {
      day: '2026-03-01',
      username: 'alice',
      plan: 'free',
      limit_minute: 60,
      limit_day: 1000,
      requests: 55,
      '2xx': 40,
      '4xx': 3,
      '429': 12,
      '5xx': 0,
      other: 0,
      banned: 0,
      from: '2026-03-01T00:00:00Z',
      to: '2026-03-02T00:00:00Z',
      note: '',
    },
    {
      day: '2026-03-02',
      username: 'alice',
      plan: 'free',
      limit_minute: 60,
      limit_day: 1000,
      requests: 25,
      '2xx': 25,
      '4xx': 0,
      '429': 0,
      '5xx': 0,
      other: 0,
      banned: 0,
      from: '2026-03-02T00:00:00Z',
      to: '2026-03-02T12:00:00Z',
      note: '',
    },
  ]);
});

test('--since: the window ends at --until; a consumer without requests in it still has its row', async (t) => {
  const alice = await run(['alice', '--since', '12h', '--until', '2026-03-02T12:00:00Z', '--json']);
  t.like(JSON.parse(alice.stdout), [{ username: 'alice', requests: 25, '2xx': 25, from: '2026-03-02T00:00:00Z', to: '2026-03-02T12:00:00Z' }]);
  const carol = await run(['carol', '--since', '3d', '--until', '2026-03-04', '--json']);
  t.like(JSON.parse(carol.stdout), [{ username: 'carol', plan: 'enterprise', limit_day: 2000000, requests: 0 }]);
  // --since a time: the same window as a duration back from --until.
  const march = await run(['--since', '2026-03-01', '--until', '2026-03-04', '--by', 'day', '--json']);
  const threeDays = await run(['--since', '3d', '--until', '2026-03-04', '--by', 'day', '--json']);
  t.is(march.code, 0, march.stderr);
  t.is(march.stdout, threeDays.stdout);
  t.is(JSON.parse(march.stdout).length, 8);
  const nothing = await run(['--since', '1h', '--until', '2026-03-01T05:00:00Z']);
  t.is(nothing.code, 0, nothing.stderr);
  t.regex(nothing.stdout, /\nno requests in this window\n$/);
  // before Prometheus held any sample: a quiet window, not (only) a plugin that is off
  const before = await run(['--since', '1h', '--until', '2025-01-01T00:00:00Z']);
  t.is(before.code, 0, before.stderr);
  t.is(
    before.stderr,
    'note: no kong_http_requests_total samples from 2024-12-31T23:00:00Z to 2025-01-01T00:00:00Z: ' +
      "no requests then, or Prometheus did not scrape Kong's prometheus plugin (with status_code_metrics) in that window\n",
  );
});

test('PROMETHEUS_URL is used when no option names a source; --status-url given wins over it', async (t) => {
  const env = { KONG_ADMIN_URL: admin.url, PROMETHEUS_URL: prometheus.url };
  const fromEnv = await runCliInProcess(['usage', 'alice', '--since', '3d', '--until', '2026-03-04', '--json'], env);
  t.like(JSON.parse(fromEnv.stdout), [{ requests: 107 }]);
  const nodes = await runCliInProcess(['usage', '--status-url', 'http://127.0.0.1:9', '--since', '1d'], env);
  t.is(nodes.code, 2);
  t.regex(nodes.stderr, /^error: --since needs Prometheus/);
});

test('credentials in --prometheus-url go as Basic auth and never into a message', async (t) => {
  const target = new URL(prometheus.url);
  const proxy = createServer((req, res) => {
    if (req.headers.authorization !== `Basic ${Buffer.from('ops:s3cret').toString('base64')}`) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized\n');
      return;
    }
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => proxy.close());
  const port = (proxy.address() as AddressInfo).port;
  const args = ['usage', 'alice', '--since', '3d', '--until', '2026-03-04', '--json'];
  const allowed = await runCliInProcess([...args, '--prometheus-url', `http://ops:s3cret@127.0.0.1:${port}`], { KONG_ADMIN_URL: admin.url });
  t.is(allowed.code, 0, allowed.stderr);
  t.like(JSON.parse(allowed.stdout), [{ requests: 107 }]);
  const refused = await runCliInProcess([...args, '--prometheus-url', `http://ops:wrong@127.0.0.1:${port}`], { KONG_ADMIN_URL: admin.url });
  t.is(refused.code, 1);
  t.is(refused.stderr, `error: Prometheus at http://127.0.0.1:${port} answered 401 without Prometheus's JSON: is it a Prometheus server?\n`);
});

test('Prometheus down, or refusing a query: one line, exit 1', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const down = await runCliInProcess(['usage', '--prometheus-url', `http://127.0.0.1:${port}`], { KONG_ADMIN_URL: admin.url });
  t.is(down.code, 1);
  t.is(down.stderr, `error: cannot reach Prometheus at http://127.0.0.1:${port}: ECONNREFUSED\n`);
  // Prometheus's own error answer, as its API writes it.
  const refusing = createServer((_req, res) =>
    res
      .writeHead(422, { 'content-type': 'application/json' })
      .end('{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory"}'),
  );
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  t.teardown(() => refusing.close());
  const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
  const refused = await runCliInProcess(['usage', '--prometheus-url', url], { KONG_ADMIN_URL: admin.url });
  t.is(refused.code, 1);
  t.is(refused.stderr, `error: Prometheus at ${url} answered 422: execution: query processing would load too many samples into memory\n`);
});

test("docs/usage.md's runs are this data's real output", async (t) => {
  const section = readFileSync(`${REPO_ROOT}docs/usage.md`, 'utf8');
  // the --status-url run is usage-live.test.ts's (a real data plane)
  const runs = [...section.matchAll(/```sh\n([\s\S]*?)```\n```text\n([\s\S]*?)```/g)].filter(([, commands]) => !commands!.includes('--status-url'));
  t.is(runs.length, 2);
  for (const [, commands, output] of runs) {
    const line = commands!.split('\n').find((l) => /^npm run (--silent )?consumers -- /.test(l))!;
    t.regex(commands!, /^export PROMETHEUS_URL=http:\/\/127\.0\.0\.1:9090 |^npm run/);
    // what follows `--`, less a comment and a redirection into a file (whose content the text block shows)
    const args = line.replace(/#.*$/, '').replace(/>\s*\S+\s*$/, '').split(' -- ')[1]!.trim().split(/\s+/);
    const result = await runCliInProcess(args, { KONG_ADMIN_URL: admin.url, PROMETHEUS_URL: prometheus.url });
    t.is(result.code, 0, result.stderr);
    t.is(result.stdout.replaceAll(prometheus.url, 'http://127.0.0.1:9090'), output!, line);
  }
  t.true(section.includes(`(stderr: \`note: consumer dave is not in the Admin API (deleted?): its usage is shown without a\nplan\`.)`));
});
