// `npm run start:cluster` (scripts/stack/cluster.ts): the backend and the local cluster (Redis,
// control plane, two data-plane nodes, nginx balancer) under the supervisor, started as npm does,
// every address moved to an ephemeral port (the fixed ones are the defaults).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { Agent } from 'undici';
import { request } from '../helpers/backend.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { spawnTs, type SpawnedProcess } from '../helpers/process.ts';

const EPHEMERAL = {
  BACKEND_PORT: '0',
  KONG_PROXY_LISTEN: '127.0.0.1:0',
  KONG_ADMIN_LISTEN: '127.0.0.1:0',
  KONG_CLUSTER_LISTEN: '127.0.0.1:0',
  CLUSTER_NODE_LISTEN: '127.0.0.1:0,127.0.0.1:0',
  CLUSTER_NODE_STATUS_LISTEN: '127.0.0.1:0,127.0.0.1:0',
  CLUSTER_REDIS_LISTEN: '127.0.0.1:0',
  KONG_NGINX_WORKER_PROCESSES: '1',
};

function startCluster(t: ExecutionContext, env: NodeJS.ProcessEnv = {}, dir = mkdtempSync(join(tmpdir(), 'npm-start-cluster-'))): { stack: SpawnedProcess; dir: string } {
  const stack = spawnTs('scripts/stack/cluster.ts', [], { ...EPHEMERAL, DATA_DIR: dir, ...env });
  t.teardown(() => {
    stack.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return { stack, dir };
}

const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

function busyPort(t: ExecutionContext): Promise<number> {
  const server: Server = createServer();
  t.teardown(() => server.close());
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

// One cluster for all three (a cluster's start is ~3-4 CPU-s): the restart needs a cluster stopped
// with a plan plugin counting in Redis, which the first one is once it made one; restarted, it
// also listens on TLS with https only, the balancer's TLS case.
test('one banner lists every piece with its pid and address; one Ctrl-C stops them all; restarted with another DECK_RATE_LIMIT_POLICY, the banner says which plans still count the old way; restarted https only, the balancer terminates TLS as compose\'s kong-lb: the nodes trust its X-Forwarded-Proto, so https only serves over it; a SIGTERM stops it too', async (t) => {
  t.timeout(120_000);
  const { stack, dir } = startCluster(t);
  const [, balancer, balancerPid] = await stack.waitFor(/balancer\s+(http:\/\/\S+)\/v1\s+\(nginx pid (\d+)/, 60_000);
  const [, node1, node1Pid] = await stack.waitFor(/node 1\s+(http:\/\/\S+)\/v1\s+\(data plane: nginx pid (\d+)/);
  const [, node2, node2Pid] = await stack.waitFor(/node 2\s+(http:\/\/\S+)\/v1\s+\(data plane: nginx pid (\d+)/);
  const [, admin, controlPlanePid] = await stack.waitFor(/admin API\s+(http:\/\/\S+)\s+\(control plane, role control_plane, pid (\d+)/);
  const [, clusterAddress] = await stack.waitFor(/cluster\s+(\S+)\s+\(the control plane's listener/);
  const [, redisAddress, redisPid] = await stack.waitFor(/redis\s+(\S+)\s+\(redis-server \S+, pid (\d+): rate limits and bans, policy redis/);
  const [, backend, backendPid] = await stack.waitFor(/backend\s+(http:\/\/\S+)\s+\(backend, pid (\d+)/);
  await stack.waitFor(/kill -HUP \d+/);
  const pids = [balancerPid, node1Pid, node2Pid, controlPlanePid, redisPid, backendPid].map(Number);
  t.is(new Set(pids).size, 6);
  t.true(pids.every(alive));
  t.regex(clusterAddress!, /^127\.0\.0\.1:\d+$/);
  t.regex(redisAddress!, /^127\.0\.0\.1:\d+$/);

  t.is((await request(`${admin}/`)).body.configuration.role, 'control_plane');
  t.is((await request(`${backend}/pets?limit=1`)).status, 200);
  for (const proxy of [balancer, node1, node2]) t.is((await request(`${proxy}/v1/pets`)).status, 401, `${proxy} answers`);
  const upstreams = new Set<string | null>();
  for (let i = 0; i < 4; i++) upstreams.add((await request(`${balancer}/v1/pets`)).headers.get('x-balancer-upstream'));
  t.deepEqual([...upstreams].sort(), [new URL(node1!).host, new URL(node2!).host].sort(), 'round robin over both nodes');
  t.true(stack.output().includes(`curl -si ${balancer}/v1/pets`));
  // The banner's usage command reads every node's Status API: the 7 keyless requests above, on either node.
  const [, usageAdmin, usageArgs] = await stack.waitFor(/^Usage: +KONG_ADMIN_URL=(\S+) npm run --silent consumers -- (usage .*)$/m);
  t.is(usageAdmin, admin);
  const usage = await runCliInProcess([...usageArgs!.split(' '), '--json'], { KONG_ADMIN_URL: admin });
  t.is(usage.code, 0, usage.stderr);
  t.regex(usage.stderr, /\(2 nodes\)/);
  const anonymous = (JSON.parse(usage.stdout) as Array<{ username: string; requests: number }>).find((row) => row.username === 'animal-store-anonymous');
  t.is(anonymous?.requests, 7);
  // each piece in a directory of its own under DATA_DIR
  for (const file of ['redis', 'control-plane/gateway.sqlite', 'node-1/nginx.conf', 'node-2/nginx.conf', 'balancer/nginx.conf', 'cluster.log']) {
    t.true(existsSync(join(dir, 'cluster', file)), file);
  }
  t.false(stack.output().includes('warning:'));
  const created = await runCliInProcess(['create', '--username', 'policy-alice', '--plan', 'free'], { KONG_ADMIN_URL: admin });
  t.is(created.code, 0, created.stderr);

  stack.child.kill('SIGINT');
  t.deepEqual(await stack.exited, { code: 0, signal: null });
  for (const pid of pids) t.false(alive(pid), `pid ${pid} stopped`);

  const restarted = startCluster(
    t,
    { DECK_RATE_LIMIT_POLICY: 'local', KONG_PROXY_LISTEN: '127.0.0.1:0, 127.0.0.1:0 http2 ssl', DECK_ANIMAL_STORE_HTTPS_ONLY: 'true' },
    dir,
  ).stack;
  const [, tlsBalancer] = await restarted.waitFor(/balancer\s+(http:\/\/\S+)\/v1\s+\(nginx pid/, 60_000);
  const [, again] = await restarted.waitFor(/admin API\s+(http:\/\/\S+)\s+\(control plane/);
  const [line] = await restarted.waitFor(/^warning: .*$/m);
  t.is(line, `warning:    1 plan plugin(s) still count with policy redis, not local: KONG_ADMIN_URL=${again} npm run consumers -- plans sync`);
  await balancerTerminatesTls(t, restarted, tlsBalancer!);
  // SIGTERM stops it as Ctrl-C's SIGINT did (scripts/stack/run-stack.ts, npm start's and the cluster's)
  restarted.child.kill('SIGTERM');
  t.deepEqual(await restarted.exited, { code: 0, signal: null });
});

/** The https only cluster's balancer: plain HTTP answered 426, https served by a node behind it. */
async function balancerTerminatesTls(t: ExecutionContext, stack: SpawnedProcess, balancer: string) {
  const [, https, caFile] = await stack.waitFor(/https\s+(https:\/\/127\.0\.0\.1:\d+)\/v1\s+\(TLS ends at the balancer, as compose's kong-lb; self-signed, trust (\S+)\)/);
  await stack.waitFor(/kill -HUP \d+/);
  // the banner's command is the one that works: over https (plain HTTP answers 426 below)
  const [, command] = await stack.waitFor(/Use it:\s+(curl .+)\n/);
  t.is(command, `curl -si --cacert ${caFile} https://localhost:${new URL(https!).port}/v1/pets -H 'Authorization: Bearer <key>'`);
  const plain = await request(`${balancer}/v1/pets`);
  t.is(plain.status, 426);
  t.is(plain.body.code, 'https_required');
  // the default certificates name localhost
  const agent = new Agent({ connect: { ca: readFileSync(caFile!), servername: 'localhost' } });
  t.teardown(() => agent.close());
  const response = await fetch(`${https}/v1/pets`, { dispatcher: agent } as RequestInit);
  t.is(response.status, 401);
  t.is(((await response.json()) as { code: string }).code, 'missing_api_key');
  t.is(response.headers.get('strict-transport-security'), 'max-age=63072000; includeSubDomains');
  t.regex(response.headers.get('x-balancer-upstream') ?? '', /^127\.0\.0\.1:\d+$/);
}

test('a missing redis-server is one line and exit 1', async (t) => {
  const { stack } = startCluster(t, { PATH: '/nonexistent' });
  const exit = await stack.exited;
  t.is(exit.code, 1);
  const lines = stack.output().trim().split('\n').filter((line) => line.startsWith('[cluster]'));
  t.deepEqual(lines, ['[cluster] the cluster needs redis-server, which is missing: apt-get install redis-server']);
});

test('a taken balancer port is one line naming the variable and the taken listener, here the TLS one', async (t) => {
  const port = await busyPort(t);
  const { stack } = startCluster(t, { KONG_PROXY_LISTEN: `127.0.0.1:0, 127.0.0.1:${port} http2 ssl` });
  const exit = await stack.exited;
  t.is(exit.code, 1);
  const lines = stack.output().trim().split('\n').filter((line) => line.startsWith('[cluster]'));
  t.deepEqual(lines, [`[cluster] cannot listen on 127.0.0.1:${port} (KONG_PROXY_LISTEN, the balancer): address already in use`]);
});
