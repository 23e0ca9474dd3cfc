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
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const groups = (parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups;
const rules = groups.flatMap((group) => group.rules);

test('promtool check rules accepts deploy/prometheus/alerts.yml', async (t) => {
  const { stdout } = await promtool(['check', 'rules', 'alerts.yml']);
  t.regex(stdout, /SUCCESS: 5 rules found/);
});

test("the rules' unit tests pass (promtool test rules alerts.test.yml)", async (t) => {
  const { stdout } = await promtool(['test', 'rules', 'alerts.test.yml']);
  t.regex(stdout, /SUCCESS/);
});

test('a warning past 80% of the day, a critical when refused: both over Kong 3.9 names, labelled by consumer and plan', (t) => {
  const alert = (name: string) => rules.find((rule) => rule.alert === name)!;
  t.is(alert('ConsumerNearDailyLimit').labels?.severity, 'warning');
  t.regex(alert('ConsumerNearDailyLimit').expr, /> 0\.8\s*$/);
  t.is(alert('ConsumerRefusedByPlan').labels?.severity, 'critical');
  for (const rule of rules.filter((r) => r.record)) {
    t.regex(rule.expr, /kong_http_requests_total\{consumer!="",code(!?)="429"\}/, rule.record);
    t.regex(rule.expr, /^sum by \(consumer\)/, `${rule.record}: one series per consumer, whatever the nodes and routes`);
  }
  for (const name of ['ConsumerNearDailyLimit', 'ConsumerRefusedByPlan']) {
    t.regex(alert(name).expr, /on \(consumer\) group_left \(plan\)/, name);
  }
});
