import { readdirSync, readFileSync } from 'node:fs';
import test from 'ava';
import { startDataPlaneNode } from '../../gateway/local/data-plane-entry.ts';
import { startTestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import { pollUntil } from '../helpers/poll.ts';
import { running } from '../helpers/process.ts';
import { buildSnapshot } from '../helpers/snapshot-builder.ts';
import { echoRequest, startUpstream } from '../helpers/upstream.ts';
import { freePort } from '../../packages/node-runtime/free-port.js';

// A node as cmd/ runs it (kong start for a data plane): the status API, routes that do not
// buffer (Kong's @unbuffered locations), reload, and the errors starting can meet.

test('the status API: /status/ready once a configuration runs, /status with its hash', async (t) => {
  const statusPort = await freePort();
  const empty = await startTestNode({ statusListen: `127.0.0.1:${statusPort}` });
  try {
    const ready = await httpGet(`${empty.statusUrl!}/status/ready`);
    t.is(ready.status, 503);
    t.is(ready.json.message, 'no configuration available (empty configuration present)');
  } finally {
    await empty.dispose();
  }
  const snapshot = buildSnapshot({ services: [{ name: 's', url: 'http://127.0.0.1:1' }] });
  const node = await startTestNode({ statusListen: `127.0.0.1:${statusPort}`, snapshot });
  try {
    t.is((await httpGet(`${node.statusUrl!}/status/ready`)).status, 200);
    const status = await httpGet(`${node.statusUrl!}/status`);
    t.is(status.json.configuration_hash, snapshot.config_hash);
    // 32 hex digits, as Kong's (spec/02-integration/08-status_api/01-core_routes_spec.lua:91)
    t.regex(status.json.configuration_hash, /^[0-9a-f]{32}$/);
    t.is(status.headers.server, 'kong/3.9.3');
    t.is((await httpGet(`${node.statusUrl!}/metrics`)).status, 404, 'no plugin serves it here');
  } finally {
    await node.dispose();
  }
});

test('POST /status/ready with status=draining drains the node: every worker answers 503 draining', async (t) => {
  // kong/status/ready.lua:126-133 (3.9.3, `kong drain`): a flag in the kong shared dict, so
  // node-wide; :108-113: GET answers 503 draining from then on. Anything else is a bare 400.
  const node = await startTestNode({
    statusListen: `127.0.0.1:${await freePort()}`,
    workerProcesses: 2,
    snapshot: { services: [{ name: 's', url: 'http://127.0.0.1:1' }] },
  });
  try {
    const ready = `${node.statusUrl!}/status/ready`;
    t.is((await httpGet(ready)).status, 200);
    for (const [type, body] of [
      ['application/json', '{"status":"ready"}'],
      ['application/x-www-form-urlencoded', 'state=draining'],
      [undefined, undefined],
    ] as const) {
      const refused = await httpGet(ready, { method: 'POST', headers: type ? { 'Content-Type': type } : {}, body });
      t.is(refused.status, 400, `${type ?? 'no body'}: ${body ?? ''}`);
    }
    t.is((await httpGet(ready, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{' })).json?.message, 'Cannot parse JSON body');
    t.is((await httpGet(ready, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'status=draining' })).status, 415);
    t.is((await httpGet(ready)).status, 200, 'still ready');

    const drained = await httpGet(ready, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"status":"draining"}' });
    t.is(drained.status, 204);
    t.is(drained.body, '');
    // each request on a new connection: both workers answer, and both say draining
    for (let i = 0; i < 8; i++) t.deepEqual((await httpGet(ready)).json, { message: 'draining' });
    t.is((await httpGet(ready)).status, 503);
    t.is((await httpGet(node.url('/nothing-routed'))).status, 404, 'a draining node still proxies');
    t.is((await httpGet(`${node.statusUrl!}/status`)).status, 200);

    // a form body says it too (kong drain sends JSON; lapis reads either)
    const form = await httpGet(`${ready}/`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'status=draining' });
    t.is(form.status, 204);

    // kong reload runs Kong.init again, whose reset_kong_shm (kong/init.lua:239-258) does not
    // keep the flag: a reloaded node is ready again
    await node.reload();
    await pollUntil('the reloaded node to say ready', async () => (await httpGet(ready)).status === 200);
  } finally {
    await node.dispose();
  }
});

test('routes without request or response buffering proxy from @unbuffered locations, plugins run once', async (t) => {
  const upstream = await startUpstream(echoRequest);
  const node = await startTestNode({
    plugins: ['dp-probe'],
    snapshot: {
      services: [{ name: 'echo', url: upstream.url }],
      routes: [
        { name: 'stream', service: 'echo', paths: ['/stream'], request_buffering: false, response_buffering: false },
        { name: 'req', service: 'echo', paths: ['/req'], request_buffering: false },
        { name: 'res', service: 'echo', paths: ['/res'], response_buffering: false },
      ],
      plugins: [{ name: 'dp-probe', config: { tag: 'p' } }],
    },
  });
  try {
    for (const path of ['/stream', '/req', '/res']) {
      const res = await httpGet(node.url(`${path}/x`), { method: 'POST', body: 'payload' });
      t.is(res.status, 200, path);
      t.is(res.json.url, '/x');
      t.is(res.json.body, 'payload');
      t.is(res.headers['x-probe-trace'], 'p:rewrite,p:access,p:header_filter', `${path}: each phase once`);
    }
  } finally {
    await node.dispose();
    await upstream.close();
  }
});

test('reload (SIGHUP) keeps serving the snapshot', async (t) => {
  const upstream = await startUpstream(echoRequest);
  const node = await startTestNode({ snapshot: { services: [{ name: 'echo', url: upstream.url }], routes: [{ service: 'echo', paths: ['/r'] }] } });
  try {
    await node.reload();
    t.is((await httpGet(node.url('/r'))).status, 200);
  } finally {
    await node.dispose();
    await upstream.close();
  }
});

test('KONG_LOG_LEVEL warn: the node starts and reloads, nginx logging no notice', async (t) => {
  const upstream = await startUpstream(echoRequest);
  const node = await startTestNode({ logLevel: 'warn', snapshot: { services: [{ name: 'echo', url: upstream.url }], routes: [{ service: 'echo', paths: ['/r'] }] } });
  try {
    t.is((await httpGet(node.url('/r'))).status, 200);
    await node.reload();
    t.is((await httpGet(node.url('/r'))).status, 200);
    t.deepEqual(node.logsMatching(/\[notice\]/), []);
  } finally {
    await node.dispose();
    await upstream.close();
  }
});

test('a plugin that is not installed stops the node from starting, as Kong', async (t) => {
  await t.throwsAsync(startDataPlaneNode({ plugins: ['no-such-plugin'], workerProcesses: 1 }), {
    message: /^the data-plane node did not start: no-such-plugin plugin is enabled but not installed/,
  });
});

test('settings are checked before nginx runs', async (t) => {
  await t.throwsAsync(startDataPlaneNode({ sharedDicts: ['bad dict name 10m'] }), { message: /KONG_NGINX_HTTP_LUA_SHARED_DICT/ });
  await t.throwsAsync(startDataPlaneNode({ trustedIps: ['not-an-ip'] }), { message: /KONG_TRUSTED_IPS/ });
});

test('buffered proxying: a plugin\'s response handler sees the whole upstream response first (Kong.response)', async (t) => {
  const upstream = await startUpstream(echoRequest);
  const node = await startTestNode({
    plugins: ['dp-probe', 'dp-buffered'],
    snapshot: {
      services: [{ name: 'echo', url: upstream.url }],
      routes: [
        { name: 'see', service: 'echo', paths: ['/see'] },
        { name: 'replace', service: 'echo', paths: ['/replace'] },
      ],
      plugins: [
        { name: 'dp-buffered', route: 'see', config: {} },
        { name: 'dp-buffered', route: 'replace', config: { replace: 'replaced' } },
        { name: 'dp-probe', route: 'see', config: { tag: 'p' } },
      ],
    },
  });
  try {
    const seen = await httpGet(node.url('/see/x'), { method: 'POST', body: 'abc' });
    t.is(seen.status, 200);
    t.is(seen.json.url, '/x');
    t.is(seen.json.body, 'abc', 'the body reaches the upstream through the subrequest');
    t.is(seen.headers['x-buffered-status'], '200');
    t.is(seen.headers['x-buffered-length'], String(Buffer.byteLength(seen.body)));
    t.is(seen.headers['x-buffered-upstream'], 'echo');
    // docs/known-differences.md: Kong decodes it with lua-multipart, {} here as no part has
    // boundary x (kong/pdk/service/response.lua:365-377)
    t.is(seen.headers['x-buffered-multipart'], 'multipart/form-data bodies cannot be decoded by the local gateway|multipart/form-data');
    t.is(seen.headers['x-probe-trace'], 'p:access,p:header_filter', 'other plugins run as usual');
    t.regex(String(seen.headers['x-kong-upstream-latency']), /^\d+$/);
    const replaced = await httpGet(node.url('/replace'));
    t.is(replaced.status, 200);
    t.is(replaced.body, 'replaced');
  } finally {
    await node.dispose();
    await upstream.close();
  }
});

test('workers whose master is killed quit within seconds instead of serving on (kong/runloop/master_watch.lua)', async (t) => {
  const node = await startTestNode({ workerProcesses: 2 });
  t.teardown(() => node.dispose());
  // the node is up once a worker runs; the other may still be forking
  await pollUntil('both workers', async () => childrenOf(node.pid).length === 2);
  const workers = childrenOf(node.pid);
  process.kill(node.pid, 'SIGKILL');
  await node.exited;
  // reparented, each notices within its 1 s check and quits as the master would have asked
  await pollUntil('the orphaned workers quit', async () => workers.every((pid) => !running(pid)), { timeoutMs: 5000 });
  t.pass();
});

/** A process's children, from /proc/<pid>/task/<tid>/children. */
function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
}

test('a prefix whose nginx still runs is refused, as kong start refuses it (kong/cmd/start.lua:56)', async (t) => {
  const first = await startTestNode();
  t.teardown(() => first.dispose());
  const second = startTestNode({ prefix: first.prefix });
  await t.throwsAsync(second, { message: `a data-plane node is already running in ${first.prefix} (nginx pid ${first.pid}): stop it first (kill -QUIT ${first.pid})` });
  t.is((await httpGet(first.url('/'))).status, 404, 'the running node is left alone');
  await first.stop();
  const again = await startTestNode({ prefix: first.prefix });
  await again.stop();
  t.pass();
});

test('a node killed with SIGKILL leaves its unix sockets behind; the next start in its prefix binds them again', async (t) => {
  const first = await startTestNode({ testClock: true });
  t.teardown(() => first.dispose());
  const sockets = readdirSync(first.prefix).filter((name) => name.endsWith('.sock')).sort();
  t.deepEqual(sockets, ['status.sock', 'test-clock.sock']);
  for (const pid of [first.pid, ...childrenOf(first.pid)]) process.kill(pid, 'SIGKILL');
  await pollUntil('nginx to end', async () => !running(first.pid));
  t.deepEqual(readdirSync(first.prefix).filter((name) => name.endsWith('.sock')).sort(), sockets, 'left behind');
  const again = await startTestNode({ prefix: first.prefix, testClock: true });
  t.teardown(() => again.dispose());
  t.is((await httpGet(again.url('/'))).status, 404);
});
