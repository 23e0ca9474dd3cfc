import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { AdminApi } from '../../packages/provisioning/index.ts';
import { startPlanLimitsExporter, type PlanLimitsExporter } from '../../scripts/plan-limits/server.ts';
import { startAlertmanager, type RunningAlertmanager } from '../helpers/alertmanager.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { testPrometheusConfig } from '../helpers/monitoring-config.ts';
import { pollUntil } from '../helpers/poll.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { startPrometheus, type RunningPrometheus } from '../helpers/prometheus.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';

// The alert flow end to end: the local gateway running gateway/kong.yml, the plan-limits exporter,
// Debian's Prometheus with deploy/prometheus/'s config and rules (only the intervals and every
// `for:` shortened) and Debian's Alertmanager with deploy/alertmanager/'s route (its waits
// shortened, its webhook pointed at a sink in this test). `small` may make 10 requests a day;
// `beside`, on the same plan, stays below 80%.

/** Alertmanager's group_interval here: how soon a group's next notification could follow. */
const GROUP_INTERVAL_MS = 500;
const DEADLINE = { timeoutMs: 30_000, intervalMs: 50 };

interface Notification {
  status: string;
  receiver: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  alerts: Array<{ status: string; labels: Record<string, string>; annotations: Record<string, string> }>;
}

/** What the sink received, in order: the bodies as sent, and parsed. */
type Received = Array<{ text: string; body: Notification }>;

let stack: TestStack;
let exporter: PlanLimitsExporter;
let alertmanager: RunningAlertmanager;
let prometheus: RunningPrometheus;
let sink: Server;
let received: Received;
let keys: Record<'small' | 'beside', string>;
let rulesDir: string;

async function startSink(received: Received): Promise<{ sink: Server; url: string }> {
  const sink = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      received.push({ text, body: JSON.parse(text) as Notification });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  return { sink, url: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/alerts` };
}

test.before(async () => {
  received = [];
  const started = await startSink(received);
  sink = started.sink;
  stack = await startStack({ node: { statusListen: '127.0.0.1:0' } });
  keys = {} as typeof keys;
  for (const username of ['small', 'beside'] as const) {
    const created = await runCliInProcess(['create', '--username', username, '--plan', 'enterprise', '--minute', '10', '--day', '10', '--json'], {
      KONG_ADMIN_URL: stack.gateway.adminUrl,
    });
    if (created.code !== 0) throw new Error(`consumers create ${username}: ${created.stderr}`);
    keys[username] = (JSON.parse(created.stdout) as { key: string }).key;
  }
  exporter = await startPlanLimitsExporter(AdminApi.connect({ url: stack.gateway.adminUrl }), { host: '127.0.0.1', port: 0 });

  const amConfig = parse(readFileSync(join(REPO_ROOT, 'deploy/alertmanager/alertmanager.yml'), 'utf8')) as {
    route: Record<string, unknown>;
    receivers: Array<{ webhook_configs: Array<{ url: string }> }>;
  };
  Object.assign(amConfig.route, { group_wait: '100ms', group_interval: `${GROUP_INTERVAL_MS}ms` });
  amConfig.receivers[0]!.webhook_configs[0]!.url = started.url;
  alertmanager = await startAlertmanager(amConfig);

  rulesDir = mkdtempSync(join(tmpdir(), 'alert-rules-'));
  const config = testPrometheusConfig({
    targets: { kong: new URL(stack.gateway.statusUrl!).host, 'plan-limits': new URL(exporter.url).host },
    rulesDir,
    alertmanager: alertmanager.target,
  });
  prometheus = await startPrometheus({ config });
  // Prometheus passes discovered Alertmanagers on every 5 s at most: until then alerts wait.
  await pollUntil(
    'Prometheus to know the Alertmanager',
    async () => {
      const response = await fetch(`${prometheus.url}/api/v1/alertmanagers`);
      const { data } = (await response.json()) as { data: { activeAlertmanagers: unknown[] } };
      return data.activeAlertmanagers.length > 0;
    },
    DEADLINE,
  );
  // The rules count a series whole only once its node was scraped without it (a series in every
  // scrape may be older than Prometheus): one scrape of every target before any request.
  await prometheus.nextScrape();
});

test.after.always(async () => {
  await prometheus?.dispose();
  await alertmanager?.dispose();
  await exporter?.close();
  await stack?.dispose();
  await new Promise<void>((resolve) => (sink ? sink.close(() => resolve()) : resolve()));
  if (rulesDir) rmSync(rulesDir, { recursive: true, force: true });
});

const send = async (username: 'small' | 'beside', n: number, expected: number) => {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${stack.gateway.proxyUrl}/v1/pets`, { headers: { authorization: `Bearer ${keys[username]}` } });
    await res.arrayBuffer();
    if (res.status !== expected) throw new Error(`${username}'s request ${i + 1}: ${res.status}, expected ${expected}`);
  }
};

const notificationsOf = (alertname: string) =>
  received.filter(({ body }) => body.alerts.some((alert) => alert.labels.alertname === alertname));

test('past 80% of its day a consumer gets one warning, refused by its plan one critical; the consumer beside it nothing', async (t) => {
  // 9 of small's 10 (90%), 5 of beside's (50%)
  await send('small', 9, 200);
  await send('beside', 5, 200);
  await pollUntil('the warning at the webhook', async () => notificationsOf('ConsumerNearDailyLimit').length > 0, DEADLINE);
  t.is(notificationsOf('ConsumerRefusedByPlan').length, 0, 'no critical before a refusal');

  // the 10th is the day's last; the 11th is refused (429)
  await send('small', 1, 200);
  await send('small', 1, 429);
  await pollUntil('the critical at the webhook', async () => notificationsOf('ConsumerRefusedByPlan').length > 0, DEADLINE);

  // Nothing more may follow: Alertmanager would send a group again a group_interval after a
  // change, and `beside` has been scraped and evaluated many times over. A few group intervals
  // without a notification, then everything the sink received.
  await new Promise((resolve) => setTimeout(resolve, 4 * GROUP_INTERVAL_MS));
  const [warning, critical, ...more] = received.map(({ body }) => body);
  t.deepEqual(more, [], 'exactly two notifications');
  for (const [notification, alertname, severity] of [
    [warning, 'ConsumerNearDailyLimit', 'warning'],
    [critical, 'ConsumerRefusedByPlan', 'critical'],
  ] as const) {
    t.is(notification!.status, 'firing');
    t.is(notification!.receiver, 'animal-store-webhook');
    t.deepEqual(notification!.groupLabels, { alertname, consumer: 'small' });
    t.is(notification!.alerts.length, 1);
    t.deepEqual(notification!.alerts[0]!.labels, { alertname, consumer: 'small', plan: 'enterprise', severity });
  }
  t.is(warning!.alerts[0]!.annotations.summary, 'small has used 90% of its daily limit (enterprise plan)');
  t.is(critical!.alerts[0]!.annotations.summary, 'small is refused by its enterprise plan (429)');
  for (const { text } of received) {
    t.false(text.includes('beside'), 'nothing about the consumer beside');
    for (const key of Object.values(keys)) t.false(text.includes(key), 'never a key');
  }
});
