import { createServer, type AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { AdminApi } from '../../packages/provisioning/index.ts';
import { startPlanLimitsExporter, type PlanLimitsExporter } from '../../scripts/plan-limits/server.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { REPO_ROOT, spawnNode, spawnTs } from '../helpers/process.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';

// The plan-limits exporter against the local gateway's Admin API, with consumers the CLI made:
// every consumer's plan and limits as a gauge the alert rules divide by, never a key.
let stack: TestStack;
let exporter: PlanLimitsExporter;
let keys: string[];

const cli = async (stack: TestStack, args: string[]) => {
  const result = await runCliInProcess([...args, '--json'], { KONG_ADMIN_URL: stack.gateway.adminUrl });
  if (result.code !== 0) throw new Error(`consumers ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout) as { key?: string };
};

const metrics = async (exporter: PlanLimitsExporter) => {
  const response = await fetch(`${exporter.url}/metrics`);
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
};

test.before(async () => {
  stack = await startStack();
  keys = [
    (await cli(stack, ['create', '--username', 'alice', '--plan', 'pro'])).key!,
    (await cli(stack, ['create', '--username', 'bob', '--plan', 'enterprise', '--minute', '10', '--day', '10'])).key!,
  ];
  exporter = await startPlanLimitsExporter(AdminApi.connect({ url: stack.gateway.adminUrl }), { host: '127.0.0.1', port: 0 });
});
test.after.always(async () => {
  await exporter?.close();
  await stack?.dispose();
});

test.serial("each consumer's plan and its limits per day and minute, from its plan plugin (gateway/plans.yaml's pro)", async (t) => {
  const { status, type, body } = await metrics(exporter);
  t.is(status, 200);
  t.is(type, 'text/plain; version=0.0.4; charset=utf-8');
  t.is(
    body,
    [
      "# HELP animal_store_consumer_plan_limit Requests the consumer's plan allows per period (its rate-limiting plugin).",
      '# TYPE animal_store_consumer_plan_limit gauge',
      'animal_store_consumer_plan_limit{consumer="alice",plan="pro",period="day"} 10000',
      'animal_store_consumer_plan_limit{consumer="alice",plan="pro",period="minute"} 300',
      'animal_store_consumer_plan_limit{consumer="bob",plan="enterprise",period="day"} 10',
      'animal_store_consumer_plan_limit{consumer="bob",plan="enterprise",period="minute"} 10',
      "# HELP animal_store_consumer_refused_counted 1 when the consumer's rate-limiting counts the requests it refuses against its limits (policy redis, sync_rate -1).",
      '# TYPE animal_store_consumer_refused_counted gauge',
      'animal_store_consumer_refused_counted{consumer="alice",plan="pro"} 0',
      'animal_store_consumer_refused_counted{consumer="bob",plan="enterprise"} 0',
      '',
    ].join('\n'),
  );
  // kong.yml's anonymous consumer is not the CLI's: no plan plugin, no series
  t.notRegex(body, /anonymous/);
  for (const key of keys) t.false(body.includes(key));
});

test.serial('a plan changed with the CLI is in the next scrape', async (t) => {
  await cli(stack, ['set-plan', 'alice', '--plan', 'free']);
  const { body } = await metrics(exporter);
  t.regex(body, /^animal_store_consumer_plan_limit\{consumer="alice",plan="free",period="day"\} 1000$/m);
  t.regex(body, /^animal_store_consumer_plan_limit\{consumer="alice",plan="free",period="minute"\} 60$/m);
  t.notRegex(body, /plan="pro"/);
});

test.serial('a plan counted in Redis in real time counts its 429s (Kong 3.9.3 rate-limiting policies/init.lua:406-415)', async (t) => {
  const admin = stack.gateway.adminUrl;
  const plugins = (await (await fetch(`${admin}/consumers/bob/plugins`)).json()) as { data: { id: string; name: string }[] };
  const plan = plugins.data.find((plugin) => plugin.name === 'rate-limiting')!;
  const patch = async (config: Record<string, unknown>) => {
    const response = await fetch(`${admin}/plugins/${plan.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ config }),
    });
    t.is(response.status, 200, await response.text());
  };
  await patch({ policy: 'redis', redis: { host: '127.0.0.1', port: 6379 } });
  t.regex((await metrics(exporter)).body, /^animal_store_consumer_refused_counted\{consumer="bob",plan="enterprise"\} 1$/m);
  // synced every 10 s instead, the refused requests end up uncounted (policies/init.lua:435)
  await patch({ sync_rate: 10 });
  t.regex((await metrics(exporter)).body, /^animal_store_consumer_refused_counted\{consumer="bob",plan="enterprise"\} 0$/m);
  await patch({ policy: 'local', sync_rate: -1 });
  t.regex((await metrics(exporter)).body, /^animal_store_consumer_refused_counted\{consumer="bob",plan="enterprise"\} 0$/m);
});

test('anything but GET /metrics is a 404', async (t) => {
  t.is((await fetch(`${exporter.url}/`)).status, 404);
  t.is((await fetch(`${exporter.url}/metrics`, { method: 'POST' })).status, 404);
});

test('an unreachable Admin API is a 503 (Prometheus: up 0), not an empty page', async (t) => {
  // a port that was just free: nothing listens there
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const exporter = await startPlanLimitsExporter(AdminApi.connect({ url: `http://127.0.0.1:${port}` }), { host: '127.0.0.1', port: 0 });
  t.teardown(() => exporter.close());
  const { status, body } = await metrics(exporter);
  t.is(status, 503);
  t.regex(body, /^cannot read the plans: cannot reach the Kong Admin API/);
});

test('`npm run plan-limits` serves the same page on PLAN_LIMITS_LISTEN, and refuses a bad address in one line', async (t) => {
  const spawned = spawnTs('scripts/plan-limits/main.ts', [], {
    KONG_ADMIN_URL: stack.gateway.adminUrl,
    PLAN_LIMITS_LISTEN: '127.0.0.1:0',
  });
  t.teardown(() => spawned.child.kill('SIGKILL'));
  const [, url] = await spawned.waitFor(/serving (http:\/\/\S+)\/metrics/);
  t.is((await metrics({ url: url!, close: async () => {} })).body, (await metrics(exporter)).body);
  spawned.child.kill('SIGTERM');
  t.is((await spawned.exited).code, 0);

  const bad = spawnTs('scripts/plan-limits/main.ts', [], { PLAN_LIMITS_LISTEN: '9464' });
  const exit = await bad.exited;
  t.is(exit.code, 1);
  t.is(bad.output().trim(), 'plan-limits: PLAN_LIMITS_LISTEN must be host:port, got 9464');
});

test("compose's image: the bundle `npm run build:plan-limits` makes serves the same page on plain node", async (t) => {
  const dockerfile = readFileSync(join(REPO_ROOT, 'deploy/plan-limits/Dockerfile'), 'utf8');
  t.regex(dockerfile, /^RUN npm run build:plan-limits$/m);
  t.regex(dockerfile, /^COPY --from=build \/app\/dist\/plan-limits\/main\.mjs \.\/main\.mjs$/m);
  t.regex(dockerfile, /^CMD \["node", "main\.mjs"\]$/m);
  await promisify(execFile)('npm', ['run', 'build:plan-limits'], { cwd: REPO_ROOT });
  const spawned = spawnNode([join(REPO_ROOT, 'dist/plan-limits/main.mjs')], {
    KONG_ADMIN_URL: stack.gateway.adminUrl,
    PLAN_LIMITS_LISTEN: '127.0.0.1:0',
    NODE_OPTIONS: '',
  });
  t.teardown(() => spawned.child.kill('SIGKILL'));
  const [, url] = await spawned.waitFor(/serving (http:\/\/\S+)\/metrics/);
  t.is((await metrics({ url: url!, close: async () => {} })).body, (await metrics(exporter)).body);
});
