import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { startFakeControlPlane, type FakeControlPlane } from '../helpers/fake-control-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import { pollUntil } from '../helpers/poll.ts';
import { buildSnapshot, type Snapshot } from '../helpers/snapshot-builder.ts';
import { echoRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';

// Snapshot delivery (gateway/local/README.md): worker 0 long-polls the control plane; a
// snapshot it can run reaches every worker (shared dict + hash check per request) and
// snapshot.json; one it cannot run keeps the previous one and is reported on the next poll.

let dir: string;
let upstream: Upstream;
let cp: FakeControlPlane | undefined;
let node: TestNode | undefined;

function version(tag: string, n: number): Snapshot {
  return buildSnapshot(
    {
      services: [{ name: 'echo', url: upstream.url }],
      routes: [{ service: 'echo', paths: [`/v/${tag}`] }],
      plugins: [{ name: 'dp-probe', config: { tag } }],
    },
    n,
  );
}

/** Requests on fresh connections (spread over the workers): route tag and worker of each. */
async function sample(path: string, count = 40) {
  const results = await Promise.all(
    Array.from({ length: count }, async () => {
      const res = await httpGet(node!.url(path));
      const tag = String(res.headers['x-probe-trace'] ?? '').split(':')[0];
      return { status: res.status, tag, worker: String(res.headers['x-probe-worker']) };
    }),
  );
  return {
    statuses: new Set(results.map((r) => r.status)),
    tags: new Set(results.map((r) => r.tag)),
    workers: new Set(results.map((r) => r.worker)),
  };
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'delivery-'));
  upstream = await startUpstream(echoRequest);
});

test.after.always(async () => {
  await node?.dispose();
  await cp?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const A = () => version('a', 1);
const B = () => version('b', 2);
let a: Snapshot;
let b: Snapshot;

test.serial('a node with no snapshot polls with an empty hash and answers 404', async (t) => {
  a = A();
  b = B();
  cp = await startFakeControlPlane(join(dir, 'cp.sock'));
  node = await startTestNode({ prefix: join(dir, 'node'), workerProcesses: 2, plugins: ['dp-probe'], clusterControlPlane: cp.address });
  await pollUntil('the first poll', async () => cp!.polls.length > 0);
  const first = cp.polls[0]!;
  t.is(first.nodeId, node.settings.nodeId);
  t.truthy(first.hostname);
  t.is(first.hash, '');
  t.is(first.wait, 30);
  t.is((await httpGet(node.url('/v/a'))).status, 404);
});

test.serial('a published snapshot runs on every worker once the node reports its hash', async (t) => {
  cp!.publish(JSON.stringify(a), a.config_hash);
  await pollUntil('a poll reporting the new hash', async () => cp!.polls.some((p) => p.hash === a.config_hash));
  const seen = await sample('/v/a');
  t.deepEqual([...seen.statuses], [200]);
  t.deepEqual([...seen.tags], ['a']);
  t.deepEqual([...seen.workers].sort(), ['0', '1']);
  t.deepEqual(JSON.parse(readFileSync(join(node!.prefix, 'snapshot.json'), 'utf8')), a);
});

test.serial('the next snapshot replaces it everywhere', async (t) => {
  cp!.publish(JSON.stringify(b), b.config_hash);
  await pollUntil('a poll reporting the new hash', async () => cp!.polls.some((p) => p.hash === b.config_hash));
  const old = await sample('/v/a');
  t.deepEqual([...old.statuses], [404]);
  t.deepEqual([...old.tags], ['b'], 'the global plugin of b answers the 404s');
  t.deepEqual([...(await sample('/v/b')).statuses], [200]);
});

for (const [what, mangle, expected] of [
  ['an unknown snapshot_version', (s: Snapshot) => ({ ...s, snapshot_version: 3 }), /snapshot_version 3 is not one this data plane knows/],
  ['a field of the wrong type', (s: Snapshot) => ({ ...s, routes: [{ ...s.routes[0]!, strip_path: 'yes' }] }), /^route [0-9a-f-]+ \(routes\[1\]\): field "strip_path" must be a boolean$/],
  ['a plugin the node did not load', (s: Snapshot) => ({ ...s, plugins: [{ ...s.plugins[0]!, name: 'no-such-plugin' }] }), /no-such-plugin plugin is in use but not enabled/],
  ['a route regex PCRE refuses', (s: Snapshot) => ({ ...s, routes: [{ ...s.routes[0]!, paths: ['~/(unclosed'] }] }), /invalid regex path/],
  ['invalid JSON', () => '{"snapshot_version":2,', /invalid JSON/],
] as const) {
  test.serial(`${what}: the previous snapshot stays, and the next poll reports it`, async (t) => {
    const hash = Math.random().toString(16).slice(2).padEnd(32, '0').slice(0, 32);
    const doc = mangle({ ...b, config_hash: hash, config_version: 3 });
    cp!.publish(typeof doc === 'string' ? doc : JSON.stringify(doc), hash);
    await pollUntil('a poll reporting the failure', async () => cp!.polls.some((p) => p.failedHash !== null && p.error !== null && expected.test(p.error)), { timeoutMs: 5000 });
    const report = cp!.polls.find((p) => p.failedHash !== null && p.error !== null && expected.test(p.error))!;
    t.is(report.hash, b.config_hash, 'still runs b');
    if (typeof doc !== 'string') t.is(report.failedHash, hash);
    t.deepEqual([...(await sample('/v/b', 10)).statuses], [200]);
    // nginx's log comes through its stderr pipe, possibly after the answers above
    await pollUntil('the log line', async () => node!.logsMatching(/was not applied \(the previous one stays\)/).length > 0);
  });
}

test.serial('a restarted node serves snapshot.json before the control plane answers, and polls until it does', async (t) => {
  await node!.stop();
  await cp!.close();
  rmSync(join(dir, 'cp.sock'), { force: true });
  node = await startTestNode({ prefix: join(dir, 'node'), workerProcesses: 2, plugins: ['dp-probe'], clusterControlPlane: `unix:${join(dir, 'cp.sock')}` });
  t.deepEqual([...(await sample('/v/b', 10)).statuses], [200], 'b from snapshot.json');
  await pollUntil('the node noticing the control plane is down', async () => node!.logsMatching(/cannot poll the control plane \(retrying\)/).length > 0);

  cp = await startFakeControlPlane(join(dir, 'cp.sock'));
  cp.publish(JSON.stringify(a), a.config_hash);
  await pollUntil('the node taking a once the control plane is back', async () => cp!.polls.some((p) => p.hash === a.config_hash), { timeoutMs: 15_000 });
  t.is(cp.polls[0]!.hash, b.config_hash, 'the first poll reports the hash of snapshot.json');
  t.deepEqual([...(await sample('/v/a', 10)).statuses], [200]);
});

test.serial('a snapshot.json of snapshot_version 1 (SHA-256 hashes) is not served: the node waits for the control plane', async (t) => {
  // version 1 hashed configurations with SHA-256 (64 hex digits); Kong's hashes are MD5 (32),
  // which version 2 reports. A node upgraded over an old snapshot.json starts empty and polls.
  const prefix = join(dir, 'upgraded');
  const old = { ...version('old', 1), snapshot_version: 1, config_hash: 'ab'.repeat(32) } as unknown as Snapshot;
  const socket = join(dir, 'cp-upgraded.sock');
  const control = await startFakeControlPlane(socket);
  const upgraded = await startTestNode({ prefix, snapshot: old, plugins: ['dp-probe'], clusterControlPlane: `unix:${socket}` });
  try {
    const ignored = /ignoring .*snapshot\.json: snapshot: snapshot_version 1 is not one this data plane knows \(it runs version 2\)/;
    await pollUntil('the log line', async () => upgraded.logsMatching(ignored).length > 0);
    t.is((await httpGet(upgraded.url('/v/old'))).status, 404, 'the old snapshot is not served');
    await pollUntil('a poll with no hash', async () => control.polls.some((p) => p.hash === ''));
    const fresh = version('new', 2);
    control.publish(JSON.stringify(fresh), fresh.config_hash);
    await pollUntil('the node running what the control plane sent', async () => (await httpGet(upgraded.url('/v/new'))).status === 200);
    t.regex(readFileSync(join(prefix, 'snapshot.json'), 'utf8'), /^\{"snapshot_version":2,/);
  } finally {
    await upgraded.dispose();
    await control.close();
  }
});
