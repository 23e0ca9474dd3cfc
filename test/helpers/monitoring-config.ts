import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { REPO_ROOT } from './process.ts';

// deploy/prometheus/'s configuration and rules for a test's Prometheus: the same jobs, rules and
// expressions, at test speed (1 s intervals, every `for:` 0s) and on the test's loopback targets.

interface PrometheusYml {
  global: Record<string, string>;
  rule_files: string[];
  alerting?: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> };
  scrape_configs: Array<Record<string, unknown> & { job_name: string }>;
}

/** deploy/prometheus/alerts.yml with every `for:` at 0s, written into `dir`; returns its path. */
function rulesWithoutDelays(dir: string): string {
  const rules = parse(readFileSync(join(REPO_ROOT, 'deploy/prometheus/alerts.yml'), 'utf8')) as { groups: Array<{ rules: Array<Record<string, unknown>> }> };
  for (const rule of rules.groups.flatMap((group) => group.rules)) if ('for' in rule) rule.for = '0s';
  const file = join(dir, 'alerts.yml');
  writeFileSync(file, stringify(rules));
  return file;
}

/**
 * deploy/prometheus/prometheus.yml with `targets` (host:port by job name: kong, plan-limits) in
 * place of compose's names, the rules from `rulesDir` (see rulesWithoutDelays), and alerts sent to
 * `alertmanager` (host:port) or nowhere.
 */
export function testPrometheusConfig(options: {
  targets: Record<string, string>;
  rulesDir: string;
  alertmanager?: string;
}): Record<string, unknown> {
  const config = parse(readFileSync(join(REPO_ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8')) as PrometheusYml;
  config.global = { scrape_interval: '1s', evaluation_interval: '1s' };
  config.rule_files = [rulesWithoutDelays(options.rulesDir)];
  if (options.alertmanager) config.alerting = { alertmanagers: [{ static_configs: [{ targets: [options.alertmanager] }] }] };
  else delete config.alerting;
  for (const job of config.scrape_configs) {
    const target = options.targets[job.job_name];
    if (!target) throw new Error(`no target for the job ${job.job_name}`);
    delete job.dns_sd_configs;
    job.static_configs = [{ targets: [target] }];
  }
  return config as unknown as Record<string, unknown>;
}
