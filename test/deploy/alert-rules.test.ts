import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { parse } from 'yaml';
import { REPO_ROOT } from '../helpers/process.ts';
import { PROMTOOL_BIN } from '../helpers/prometheus.ts';

// deploy/prometheus/alerts.yml: promtool's checks and the rules' unit tests (alerts.test.yml).
const RULES = join(REPO_ROOT, 'deploy/prometheus/alerts.yml');
const promtool = (args: string[]) => promisify(execFile)(PROMTOOL_BIN, args, { cwd: join(REPO_ROOT, 'deploy/prometheus') });

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const groups = (parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups;
const rules = groups.flatMap((group) => group.rules);

test('promtool check rules accepts deploy/prometheus/alerts.yml', async (t) => {
  const { stdout } = await promtool(['check', 'rules', 'alerts.yml']);
  t.regex(stdout, /SUCCESS: 7 rules found/);
});

test("the rules' unit tests pass (promtool test rules alerts.test.yml)", async (t) => {
  const { stdout } = await promtool(['test', 'rules', 'alerts.test.yml']);
  t.regex(stdout, /SUCCESS/);
});

/** A Prometheus duration such as `1m`, `30s` or `1m30s`, in seconds. */
function seconds(duration: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1 };
  const parts = [...duration.matchAll(/(\d+)([hms])/g)];
  if (parts.map((part) => part[0]).join('') !== duration) throw new Error(`not a duration: ${duration}`);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit!]!, 0);
}

test("the 80% warning reaches the webhook with a minute to spare before the catalogue's quickest plan is used up", (t) => {
  const read = (path: string) => parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as Record<string, unknown>;
  const { global } = read('deploy/prometheus/prometheus.yml') as { global: { scrape_interval: string; evaluation_interval: string } };
  const { route } = read('deploy/alertmanager/alertmanager.yml') as { route: { group_wait: string } };
  const { plans } = read('gateway/plans.yaml') as { plans: Record<string, { minute?: number; day?: number }> };
  const warning = rules.find((rule) => rule.alert === 'ConsumerNearDailyLimit')!;
  // the unit tests evaluate as compose's Prometheus does
  t.is(seconds((read('deploy/prometheus/alerts.test.yml') as { evaluation_interval: string }).evaluation_interval), seconds(global.evaluation_interval));

  // Past 80% by one request: seen at the next scrape, then the next evaluation, `for` later
  // firing, sent once group_wait is over (Prometheus sends a newly firing alert at once).
  const lead = seconds(global.scrape_interval) + seconds(global.evaluation_interval) + seconds(warning.for ?? '0s') + seconds(route.group_wait);
  // from 80% to 100% of the day at the plan's full minute rate
  const quickest = Math.min(...Object.values(plans).flatMap(({ minute, day }) => (minute && day ? [((0.2 * day) / minute) * 60] : [])));
  t.is(quickest, 200, "the free plan's 200 requests at 60 a minute");
  t.true(lead + 60 <= quickest, `the warning takes up to ${lead} s, the quickest plan's last 20% lasts ${quickest} s`);
});

test('a warning past 80% of the day, a critical when refused: both over Kong 3.9 names, labelled by consumer and plan', (t) => {
  const alert = (name: string) => rules.find((rule) => rule.alert === name)!;
  t.is(alert('ConsumerNearDailyLimit').labels?.severity, 'warning');
  t.regex(alert('ConsumerNearDailyLimit').expr, /> 0\.8\s*$/);
  t.is(alert('ConsumerRefusedByPlan').labels?.severity, 'critical');
  const recorded = new Set(rules.flatMap((rule) => (rule.record ? [rule.record] : [])));
  for (const rule of rules.filter((r) => r.record)) {
    // Kong's counter by consumer and status, or sums of those already recorded
    const reads = [...rule.expr.matchAll(/\b(?:kong_http_requests_total|consumer:[a-z_]+:[a-z0-9]+)\b/g)].map(([name]) => name);
    t.true(reads.length > 0, rule.record);
    for (const name of reads) t.true(name === 'kong_http_requests_total' || recorded.has(name), `${rule.record} reads ${name}`);
    if (reads.includes('kong_http_requests_total')) t.regex(rule.expr, /kong_http_requests_total\{consumer!="",code(!?)="429"\}/, rule.record);
    t.regex(rule.expr, /^sum by \(consumer\)/, `${rule.record}: one series per consumer, whatever the nodes and routes`);
  }
  t.regex(alert('ConsumerNearDailyLimit').expr, /^consumer:kong_http_requests_counted:increase1d\b/);
  for (const name of ['ConsumerNearDailyLimit', 'ConsumerRefusedByPlan']) {
    t.regex(alert(name).expr, /on \(consumer\) group_left \(plan\)/, name);
  }
});
