import test from 'ava';
import { runCliInProcess } from '../helpers/cli.ts';
import { startTestCluster, type TestCluster } from '../helpers/cluster.ts';
import { startPrometheus, type RunningPrometheus } from '../helpers/prometheus.ts';

// Usage across nodes: `npm run start:cluster`'s topology (two data-plane nodes behind the
// balancer, counting limits and bans in Redis), a real Prometheus scraping each node's Status
// API, and `consumers usage` summing them, through Prometheus and through each node's /metrics.
// The control plane's Admin API serves what a Kong control plane's /metrics does.
let cluster: TestCluster;
let prometheus: RunningPrometheus;
const keys: Record<string, string> = {};

test.before(async () => {
  cluster = await startTestCluster();
  const targets = cluster.nodes.map((node) => new URL(node.statusUrl!).host);
  prometheus = await startPrometheus({
    config: {
      global: { scrape_interval: '500ms', evaluation_interval: '500ms' },
      scrape_configs: [{ job_name: 'kong', metrics_path: '/metrics', static_configs: [{ targets }] }],
    },
  });
  for (const [username, minute] of [['alice', 1000], ['bob', 4]] as const) {
    const created = await runCliInProcess(['create', '--username', username, '--plan', 'enterprise', '--minute', String(minute), '--day', '100000', '--json'], {
      KONG_ADMIN_URL: cluster.adminUrl,
    });
    if (created.code !== 0) throw new Error(created.stderr);
    keys[username] = (JSON.parse(created.stdout) as { key: string }).key;
  }
});
test.after.always(async () => {
  await prometheus?.dispose();
  await cluster?.dispose();
});

test.serial("Prometheus sums both nodes' counters; each node's /metrics has its share", async (t) => {
  const alice = async (n: number) => {
    for (let i = 0; i < n; i++) t.is((await cluster.call('balancer', '/v1/pets', { key: keys.alice })).status, 200);
  };
  // alice's series exist on both nodes (round robin) before the window opens
  await alice(4);
  await prometheus.nextScrape();
  // the window starts at the earlier node's last scrape before the traffic, ends at the later
  // node's first after it
  const [earliest] = await prometheus.query('min(timestamp(kong_http_requests_total{consumer="alice"}))');
  const from = new Date(Math.round(earliest!.value * 1000));
  await alice(10);
  // a few more scrapes: the longer the window against the nodes' scrape offsets, the less
  // increase() extrapolates (below)
  for (let i = 0; i < 6; i++) await prometheus.nextScrape();
  const to = await prometheus.lastSampleTime('kong_http_requests_total{consumer="alice"}');
  const at = await prometheus.query('sum by (instance) (kong_http_requests_total{consumer="alice"})', to);
  t.is(at.length, 2, 'both nodes served alice');
  t.is(at.reduce((sum, sample) => sum + sample.value, 0), 14, "the nodes' counters add up to every request");

  const windowed = await runCliInProcess(['usage', 'alice', '--prometheus-url', prometheus.url, '--since', from.toISOString(), '--until', to.toISOString(), '--json'], {
    KONG_ADMIN_URL: cluster.adminUrl,
  });
  t.is(windowed.code, 0, windowed.stderr);
  const [row] = JSON.parse(windowed.stdout) as Array<{ username: string; plan: string; requests: number; '2xx': number }>;
  t.like(row, { username: 'alice', plan: 'enterprise' });
  // Both nodes' increases are summed. The two are scraped at different moments within the
  // interval, so the window cannot start and end on both nodes' samples: increase() extrapolates
  // each node's change to the window's edges (docs/usage.md: "How exact"), by at most one scrape offset
  // (< 0.5 s) against a window of ~4 s: at most 2 of 10 here.
  t.true(row!.requests >= 10 && row!.requests <= 12, String(row!.requests));
  t.is(row!['2xx'], row!.requests);
});

test.serial('a ban earned through the balancer: counted once, its refusals on whichever node answered', async (t) => {
  const seen = { ok: 0, limited: 0, banned: 0 };
  // 4 a minute, then 429s until the key is banned in Redis (a strike is written from a timer:
  // the last refusals may still count as strikes), then 6 refusals of the ban
  while (seen.banned < 6) {
    const res = await cluster.call('balancer', `/v1/pets`, { key: keys.bob });
    if (res.status === 200) seen.ok += 1;
    else if (res.body?.code === 'rate_limit_exceeded') seen.limited += 1;
    else if (res.body?.code === 'api_key_banned') seen.banned += 1;
    else t.fail(`unexpected ${res.status} ${JSON.stringify(res.body)}`);
    if (seen.limited > 40) t.fail('no ban after 40 refusals');
  }
  t.is(seen.ok, 4);
  t.true(seen.limited >= 21, String(seen.limited));

  const totals = await runCliInProcess(['usage', 'bob', ...cluster.nodes.flatMap((node) => ['--status-url', node.statusUrl!]), '--json'], {
    KONG_ADMIN_URL: cluster.adminUrl,
  });
  t.is(totals.code, 0, totals.stderr);
  t.like(JSON.parse(totals.stdout), [{ username: 'bob', '2xx': 4, '429': seen.limited, banned: seen.banned, note: 'totals since each node started' }]);

  const series = async (pattern: RegExp) => {
    let sum = 0;
    let nodes = 0;
    for (const node of cluster.nodes) {
      const body = await (await fetch(`${node.statusUrl!}/metrics`)).text();
      const match = pattern.exec(body);
      if (match) {
        sum += Number(match[1]);
        nodes += 1;
      }
    }
    return { sum, nodes };
  };
  t.deepEqual((await series(/^kong_animal_store_edge_bans_total\{consumer="bob"\} (\d+)$/m)).sum, 1, 'one ban, counted by the node whose strike started it');
  const banned = await series(/^kong_animal_store_edge_banned_requests_total\{consumer="bob"\} (\d+)$/m);
  t.is(banned.sum, seen.banned);
  t.is(banned.nodes, 2, 'the balancer sent the banned requests to both nodes');
});

test.serial("the control plane's /metrics: its data planes, as Kong's control plane serves them", async (t) => {
  const res = await fetch(`${cluster.adminUrl}/metrics`);
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/plain; charset=UTF-8');
  const body = await res.text();
  const planes = (await cluster.admin('/clustering/data-planes')).body.data as Array<{ id: string; hostname: string; ip: string; config_hash: string }>;
  t.is(planes.length, 2);
  for (const plane of planes) {
    const labels = `node_id="${plane.id}",hostname="${plane.hostname}",ip="${plane.ip}"`;
    t.regex(body, new RegExp(`^kong_data_plane_last_seen\\{${labels}\\} \\d{10}$`, 'm'));
    t.regex(body, new RegExp(`^kong_data_plane_config_hash\\{${labels}\\} \\d\\.\\d+e\\+\\d+$`, 'm'));
    t.true(body.includes(`kong_data_plane_version_compatible{${labels},kong_version="3.9.3"} 1\n`));
  }
  t.regex(body, /^kong_node_info\{node_id="[0-9a-f-]{36}",version="3\.9\.3"\} 1$/m);
  t.false(body.includes('kong_http_requests_total'), 'requests are counted by the data planes');
});
