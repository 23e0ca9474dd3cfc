import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { REPO_ROOT } from '../helpers/process.ts';
import { AMTOOL_BIN } from '../helpers/alertmanager.ts';
import { PROMTOOL_BIN } from '../helpers/prometheus.ts';
import { sharedFile } from '../helpers/shared-files.ts';
import { PROMETHEUS_DICT_SIZE } from '../../gateway/local/data-plane-entry.ts';

// docker-compose.yml's usage monitoring, checked statically (no Docker engine here): Kong's Status
// API for Prometheus on compose's network only, Prometheus scraping it with deploy/prometheus/,
// Grafana provisioned from deploy/grafana/, their health checks and ports. The whole file is
// validated against the Compose Specification's JSON schema.
type Service = {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  expose?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; retries?: number };
};
const composeText = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
// `<<: *kong-database` is a YAML merge key, which Compose resolves.
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
type ServiceName = 'kong' | 'kong-cp' | 'prometheus' | 'grafana' | 'alertmanager' | 'plan-limits';
const services = compose.services as Record<ServiceName, Service & { build?: { context: string; dockerfile: string } }>;
const { kong, prometheus, grafana, alertmanager } = services;
const planLimits = services['plan-limits'];
const promConfig = parse(readFileSync(join(REPO_ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
  rule_files: string[];
  alerting: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> };
  scrape_configs: Array<{
    job_name: string;
    metrics_path?: string;
    dns_sd_configs?: Array<Record<string, unknown>>;
    static_configs?: Array<{ targets: string[] }>;
  }>;
};

/** The Compose Specification schema, kept beside the repository in ../shared (undefined without it). */
const COMPOSE_SCHEMA = sharedFile('compose/compose-spec.schema.json');

/** The container path a host path is mounted at, in a `host:container[:ro]` volume. */
const mountOf = (service: Service, host: string) => service.volumes?.find((v) => v.split(':')[0] === host)?.split(':')[1];
const flag = (service: Service, name: string) => service.command?.find((arg) => arg.startsWith(`${name}=`))?.slice(name.length + 1);

if (COMPOSE_SCHEMA !== undefined) {
  test('docker-compose.yml is valid against the Compose Specification schema', (t) => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    // The schema names draft-07 as https://json-schema.org/draft-07/schema, which Ajv (draft-07 by
    // default) knows under its http://…# id only.
    const { $schema: _draft, ...schema } = JSON.parse(readFileSync(COMPOSE_SCHEMA, 'utf8')) as Record<string, unknown>;
    const validate = ajv.compile(schema);
    t.true(validate(compose), ajv.errorsText(validate.errors));
  });
}

test("Kong's Status API listens for Prometheus on compose's network, and is not published", (t) => {
  t.is(kong.environment?.KONG_STATUS_LISTEN, '0.0.0.0:8100');
  t.deepEqual(kong.expose, ['8100']);
  t.false((kong.ports ?? []).some((port) => port.split(':').includes('8100')), 'never on the host');
});

test("Kong's prometheus_metrics dict is declared at the size the local node uses (10,000 consumers)", (t) => {
  const dicts = kong.environment!.KONG_NGINX_HTTP_LUA_SHARED_DICT!.split(';').map((entry) => entry.trim().replace(/^lua_shared_dict\s+/, ''));
  t.true(dicts.includes(`prometheus_metrics ${PROMETHEUS_DICT_SIZE}`), dicts.join('; '));
  // Kong renders the value as `lua_shared_dict <value>;` (kong/templates/nginx_kong.lua)
  t.regex(kong.environment!.KONG_NGINX_HTTP_LUA_SHARED_DICT!, /^[a-z_]+ \d+m(; lua_shared_dict [a-z_]+ \d+m)*$/);
});

test('Prometheus scrapes every kong replica at the Status API port, with the config compose mounts', (t) => {
  const statusPort = Number(kong.environment!.KONG_STATUS_LISTEN!.split(':').pop());
  const [job, ...others] = promConfig.scrape_configs;
  t.deepEqual(
    others.map((other) => other.job_name),
    ['plan-limits'],
  );
  t.is(job!.job_name, 'kong');
  t.is(job!.metrics_path, '/metrics');
  t.deepEqual(job!.dns_sd_configs, [{ names: ['kong'], type: 'A', port: statusPort, refresh_interval: '30s' }]);
  t.is(flag(prometheus, '--config.file'), mountOf(prometheus, './deploy/prometheus/prometheus.yml'));
  t.is(flag(prometheus, '--storage.tsdb.path'), mountOf(prometheus, 'prometheus-data'));
  t.true('prometheus-data' in compose.volumes);
});

test("Prometheus loads the alert rules compose mounts beside its config, and scrapes the plan-limits exporter", (t) => {
  const configDir = dirname(flag(prometheus, '--config.file')!);
  t.deepEqual(promConfig.rule_files, ['alerts.yml']);
  t.is(mountOf(prometheus, './deploy/prometheus/alerts.yml'), join(configDir, 'alerts.yml'));
  const job = promConfig.scrape_configs.find((config) => config.job_name === 'plan-limits')!;
  const port = planLimits.environment!.PLAN_LIMITS_LISTEN!.split(':').pop()!;
  t.deepEqual(job.static_configs, [{ targets: [`plan-limits:${port}`] }]);
  t.deepEqual(planLimits.expose, [port]);
  t.is(planLimits.ports, undefined, 'never on the host');
  const adminPort = services['kong-cp'].environment!.KONG_ADMIN_LISTEN!.split(':').pop();
  t.is(planLimits.environment!.KONG_ADMIN_URL, `http://kong-cp:${adminPort}`);
  t.is(planLimits.depends_on?.['kong-cp']?.condition, 'service_healthy');
  t.deepEqual(planLimits.build, { context: '.', dockerfile: 'deploy/plan-limits/Dockerfile' });
});

test("Prometheus sends its alerts to compose's Alertmanager, which runs the repository's config", async (t) => {
  const listen = flag(alertmanager, '--web.listen-address')!;
  t.deepEqual(promConfig.alerting.alertmanagers, [{ static_configs: [{ targets: [`alertmanager:${listen.split(':').pop()}`] }] }]);
  t.is(flag(alertmanager, '--config.file'), mountOf(alertmanager, './deploy/alertmanager/alertmanager.yml'));
  t.is(flag(alertmanager, '--storage.path'), mountOf(alertmanager, 'alertmanager-data'));
  t.is(flag(alertmanager, '--cluster.listen-address'), '', 'one instance: no gossip port');
  t.deepEqual(alertmanager.ports, ['127.0.0.1:9093:9093']);
  t.deepEqual(alertmanager.healthcheck?.test, ['CMD', 'wget', '-q', '-O', '/dev/null', `http://127.0.0.1:${listen.split(':').pop()}/-/ready`]);
  // The tests run Debian's Alertmanager 0.25: the image stays on that line.
  t.regex(alertmanager.image!, /^prom\/alertmanager:v0\.25\.\d+$/);
  const { stdout } = await promisify(execFile)(AMTOOL_BIN, ['check-config', join(REPO_ROOT, 'deploy/alertmanager/alertmanager.yml')]);
  t.regex(stdout, /SUCCESS/);
});

test('promtool accepts deploy/prometheus/prometheus.yml', async (t) => {
  const { stdout } = await promisify(execFile)(PROMTOOL_BIN, ['check', 'config', join(REPO_ROOT, 'deploy/prometheus/prometheus.yml')]);
  t.regex(stdout, /SUCCESS/);
});

test('Prometheus keeps more than a month: a monthly billing export can run late', (t) => {
  const retention = /^(\d+)d$/.exec(flag(prometheus, '--storage.tsdb.retention.time') ?? '');
  t.truthy(retention);
  t.true(Number(retention![1]) >= 35);
  // The tests run Prometheus 2.x (Debian's 2.42): the image stays on that line.
  t.regex(prometheus.image!, /^prom\/prometheus:v2\.\d+\.\d+$/);
});

test('Grafana is provisioned from the repository: the data source, the dashboards, the home dashboard', (t) => {
  t.is(mountOf(grafana, './deploy/grafana/provisioning'), '/etc/grafana/provisioning');
  const provider = parse(readFileSync(join(REPO_ROOT, 'deploy/grafana/provisioning/dashboards/animal-store.yml'), 'utf8')) as {
    providers: Array<{ type: string; options: { path: string } }>;
  };
  const dashboards = mountOf(grafana, './deploy/grafana/dashboards') ?? '(not mounted)';
  t.is(provider.providers[0]!.type, 'file');
  t.is(provider.providers[0]!.options.path, dashboards);
  const home = grafana.environment!.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH!;
  t.is(dirname(home), dashboards);
  t.true(existsSync(join(REPO_ROOT, 'deploy/grafana/dashboards', home.slice(dashboards.length + 1))));
  const datasource = parse(readFileSync(join(REPO_ROOT, 'deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as {
    datasources: Array<{ type: string; url: string; jsonData: { timeInterval: string } }>;
  };
  const listen = flag(prometheus, '--web.listen-address')!;
  t.is(datasource.datasources[0]!.type, 'prometheus');
  t.is(datasource.datasources[0]!.url, `http://prometheus:${listen.split(':').pop()}`);
  t.is(datasource.datasources[0]!.jsonData.timeInterval, '15s', "Prometheus's scrape interval, for $__rate_interval");
  t.is(grafana.depends_on?.prometheus?.condition, 'service_healthy');
});

test('Prometheus and Grafana have health checks on their own ready endpoints', (t) => {
  const listen = flag(prometheus, '--web.listen-address')!.split(':').pop();
  t.deepEqual(prometheus.healthcheck?.test, ['CMD', 'wget', '-q', '-O', '/dev/null', `http://127.0.0.1:${listen}/-/ready`]);
  t.deepEqual(grafana.healthcheck?.test, ['CMD', 'wget', '-q', '-O', '/dev/null', 'http://127.0.0.1:3000/api/health']);
  for (const service of [prometheus, grafana]) t.true((service.healthcheck?.retries ?? 0) > 0);
});

test("the monitoring is published on the host's loopback only", (t) => {
  t.deepEqual(prometheus.ports, ['127.0.0.1:9090:9090']);
  t.deepEqual(grafana.ports, ['127.0.0.1:3001:3000']);
  t.deepEqual(alertmanager.ports, ['127.0.0.1:9093:9093']);
  for (const [name, service] of Object.entries(compose.services)) {
    for (const port of service.ports ?? []) {
      // the balancer's https and its 426 on port 80 are the only public ports
      if (!(name === 'kong-lb' && ['443:443', '80:80'].includes(port))) t.true(port.startsWith('127.0.0.1:'), `${name}: ${port}`);
    }
  }
});

test('every file the monitoring mounts is in the repository', (t) => {
  for (const service of [prometheus, grafana, alertmanager]) {
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0]!;
      if (source.startsWith('.')) t.true(existsSync(join(REPO_ROOT, source)), source);
      else t.true(source in compose.volumes, `named volume ${source}`);
    }
  }
});
