// The control plane's side of snapshot delivery (gateway/local/README.md): long-polls answered at
// once, held until a publish, 304 when nothing changes; convergence for Admin API writes.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { ClusterListener } from '../../gateway/local/data-plane-entry.ts';
import type { CompiledSnapshot } from '../../gateway/local/data-plane-entry.ts';
import { pollUntil } from '../helpers/poll.ts';

const NODE_A = '11111111-1111-4111-8111-111111111111';
const NODE_B = '22222222-2222-4222-8222-222222222222';

function snapshot(version: number): CompiledSnapshot {
  const hash = version.toString(16).padStart(32, '0');
  return { version, hash, json: JSON.stringify({ snapshot_version: 2, config_version: version, config_hash: hash }) };
}

interface Answer {
  status: number;
  body: string;
}

/** A poll as a data-plane node sends it, over the unix socket. */
function poll(socketPath: string, query: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, path: `/v1/snapshot?${new URLSearchParams(query).toString()}` }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function withListener(
  run: (listener: ClusterListener, socket: string, logs: string[]) => Promise<void>,
  clocks: { now?: () => number; elapsed?: () => number } = {},
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cluster-'));
  const logs: string[] = [];
  const listener = new ClusterListener(snapshot(1), (level, message) => logs.push(`${level}: ${message}`), clocks.now, clocks.elapsed);
  const socket = join(dir, 'cluster.sock');
  await listener.listen({ path: socket });
  try {
    await run(listener, socket, logs);
  } finally {
    await listener.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a node without the current configuration gets it at once', async (t) => {
  await withListener(async (_, socket) => {
    const answer = await poll(socket, { node_id: NODE_A, hash: '', wait: '30' });
    t.is(answer.status, 200);
    t.is((JSON.parse(answer.body) as { config_version: number }).config_version, 1);
  });
});

test('a node that runs it waits: 304 when nothing changes within `wait`', async (t) => {
  await withListener(async (listener, socket) => {
    const answer = await poll(socket, { node_id: NODE_A, hash: listener.snapshot.hash, wait: '0' });
    t.deepEqual(answer, { status: 304, body: '' });
  });
});

test('a held poll is answered by the next publish', async (t) => {
  await withListener(async (listener, socket) => {
    const held = poll(socket, { node_id: NODE_A, hash: listener.snapshot.hash, wait: '30' });
    await pollUntil('the poll to arrive', () => Promise.resolve(listener.dataPlanes().length === 1));
    listener.publish(snapshot(2));
    const answer = await held;
    t.is(answer.status, 200);
    t.is((JSON.parse(answer.body) as { config_hash: string }).config_hash, snapshot(2).hash);
  });
});

test('a configuration a node could not load is not sent to it again, and is logged once with the reason', async (t) => {
  await withListener(async (listener, socket, logs) => {
    const failed = { node_id: NODE_A, hostname: 'dp-1', hash: '', failed_hash: listener.snapshot.hash, error: 'routes[1].paths[1]: bad\nregex', wait: '0' };
    t.is((await poll(socket, failed)).status, 304);
    t.is((await poll(socket, failed)).status, 304);
    const errors = logs.filter((line) => line.startsWith('err:'));
    t.is(errors.length, 1);
    t.regex(errors[0]!, /data plane dp-1 \(11111111-.*\) could not load configuration 000000000000: routes\[1\]\.paths\[1\]: bad regex/);
  });
});

test('settled: resolves when every live node reports the current hash', async (t) => {
  await withListener(async (listener, socket) => {
    await poll(socket, { node_id: NODE_A, hash: listener.snapshot.hash, wait: '0' });
    await poll(socket, { node_id: NODE_B, hash: listener.snapshot.hash, wait: '0' });
    listener.publish(snapshot(2));
    let settled = false;
    const done = listener.settled(10_000).then(() => (settled = true));
    await poll(socket, { node_id: NODE_A, hash: snapshot(2).hash, wait: '0' });
    t.false(settled, 'node B still runs version 1');
    await poll(socket, { node_id: NODE_B, hash: snapshot(2).hash, wait: '0' });
    await done;
    t.true(settled);
    t.deepEqual(listener.dataPlanes().map((node) => node.sync_status), ['normal', 'normal']);
  });
});

test('settled: gives up after its bound when a node does not catch up, and says which node is behind', async (t) => {
  await withListener(async (listener, socket, logs) => {
    await poll(socket, { node_id: NODE_A, hash: listener.snapshot.hash, wait: '0' });
    await poll(socket, { node_id: NODE_B, hash: listener.snapshot.hash, wait: '0' });
    listener.publish(snapshot(2));
    await poll(socket, { node_id: NODE_B, hash: snapshot(2).hash, wait: '0' });
    const started = Date.now();
    await listener.settled(50);
    t.true(Date.now() - started >= 45);
    t.deepEqual(listener.dataPlanes().map((node) => node.sync_status), ['unknown', 'normal']);
    t.deepEqual(logs.filter((line) => line.startsWith('warn:')), [
      `warn: an Admin API write answered before every data plane ran it (50 ms); behind: - (${NODE_A}) at ${snapshot(1).hash.slice(0, 12)}`,
    ]);
    logs.length = 0;
    await poll(socket, { node_id: NODE_A, hash: snapshot(2).hash, wait: '0' });
    await listener.settled(50);
    t.deepEqual(logs, [], 'caught up: the next write answers without a warning');
  });
});

test('settled: a node is alive by real time elapsed, whatever the clock the gateway dates by says', async (t) => {
  let now = Date.UTC(2030, 0, 1, 12);
  await withListener(
    async (listener, socket, logs) => {
      await poll(socket, { node_id: NODE_A, hash: listener.snapshot.hash, wait: '0' });
      listener.publish(snapshot(2));
      now += 3600_000; // a test clock set an hour ahead: the node polled a moment ago all the same
      await listener.settled(50);
      t.is(logs.filter((line) => line.startsWith('warn:')).length, 1, 'waited for node A, which is behind');
      t.is(listener.dataPlanes()[0]!.last_seen, Math.floor((now - 3600_000) / 1000), 'last_seen by the gateway\'s clock');
    },
    { now: () => now },
  );
});

test('settled: a node that has not polled for 35 s is not waited for', async (t) => {
  let elapsed = 0;
  await withListener(
    async (listener, socket, logs) => {
      await poll(socket, { node_id: NODE_A, hash: listener.snapshot.hash, wait: '0' });
      listener.publish(snapshot(2));
      elapsed += 35_001;
      const started = Date.now();
      await listener.settled(10_000);
      t.true(Date.now() - started < 5000, 'answered at once');
      t.deepEqual(logs.filter((line) => line.startsWith('warn:')), []);
    },
    { elapsed: () => elapsed },
  );
});

test("a node's row has Kong's fields: the version it reported, updated_at, labels", async (t) => {
  // kong/db/schema/entities/clustering_data_planes.lua; kong/clustering/control_plane.lua:251-262
  // upserts version (the DP's node_version), labels (none without cluster_dp_labels) and, as
  // auto_timestamp_s, updated_at on every update
  let now = Date.UTC(2030, 0, 1, 12);
  await withListener(
    async (listener, socket) => {
      await poll(socket, { node_id: NODE_A, hostname: 'dp-1', hash: listener.snapshot.hash, node_version: '3.9.3', wait: '0' });
      now += 5000;
      await poll(socket, { node_id: NODE_A, hostname: 'dp-1', hash: listener.snapshot.hash, node_version: '3.9.3', wait: '0' });
      const [row] = listener.dataPlanes();
      t.like(row, { id: NODE_A, hostname: 'dp-1', version: '3.9.3', labels: null, last_seen: now / 1000, updated_at: now / 1000, sync_status: 'normal' });
      t.deepEqual(Object.keys(row!).sort(), ['config_hash', 'hostname', 'id', 'ip', 'labels', 'last_seen', 'sync_status', 'updated_at', 'version']);
      t.is((await poll(socket, { node_id: NODE_B, node_version: '3.9.3; drop' })).status, 400);
    },
    { now: () => now },
  );
});

/** A held poll whose connection is cut, as when its node is killed (kill -9) while it waits. */
async function pollThenDie(listener: ClusterListener, socketPath: string, nodeId: string): Promise<void> {
  const query = new URLSearchParams({ node_id: nodeId, hash: listener.snapshot.hash, wait: '30' }).toString();
  const req = httpRequest({ socketPath, path: `/v1/snapshot?${query}` });
  req.on('error', () => {});
  req.end();
  await pollUntil('the poll to be held', () => Promise.resolve(listener.dataPlanes().some((node) => node.id === nodeId)));
  req.destroy();
}

test('settled: a node whose held poll closed is not waited for once it has not polled again within the grace', async (t) => {
  let elapsed = 0;
  await withListener(
    async (listener, socket, logs) => {
      await pollThenDie(listener, socket, NODE_A);
      const held = poll(socket, { node_id: NODE_B, hash: listener.snapshot.hash, wait: '30' });
      await pollUntil('both nodes', () => Promise.resolve(listener.dataPlanes().length === 2));
      elapsed += 1000; // A polled a second ago: live by NODE_LIVE_MS, but its connection is gone
      listener.publish(snapshot(2));
      t.is((await held).status, 200, 'B takes version 2: between two polls, it is waited for');
      let settled = false;
      const started = Date.now();
      const done = listener.settled(5000).then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      t.false(settled, 'B has not reported version 2 yet');
      await poll(socket, { node_id: NODE_B, hash: snapshot(2).hash, wait: '0' });
      await done;
      t.true(Date.now() - started < 4000, 'not the 5 s bound: A is not waited for');
      t.deepEqual(logs.filter((line) => line.startsWith('warn:')), []);
      t.is(listener.dataPlanes().length, 2, 'A is still listed, as Kong keeps its row');
    },
    { elapsed: () => elapsed },
  );
});

test('settled: a node whose poll closed a moment ago is waited for (a reload polls again at once)', async (t) => {
  await withListener(
    async (listener, socket, logs) => {
      await pollThenDie(listener, socket, NODE_A);
      listener.publish(snapshot(2));
      await listener.settled(400);
      t.deepEqual(logs.filter((line) => line.startsWith('warn:')).length, 1, 'waited for A');
      logs.length = 0;
      listener.publish(snapshot(3));
      await poll(socket, { node_id: NODE_A, hash: snapshot(3).hash, wait: '0' });
      await listener.settled(400);
      t.deepEqual(logs, [], 'it polled again: live');
    },
    { elapsed: () => 0 },
  );
});

test('malformed polls get 400 naming the parameter; other paths 404', async (t) => {
  await withListener(async (_, socket) => {
    t.deepEqual(await poll(socket, { node_id: 'not-a-uuid' }), { status: 400, body: '{"message":"node_id: expected a UUID"}' });
    t.is((await poll(socket, { node_id: NODE_A, hash: 'xyz' })).status, 400);
    t.is((await poll(socket, { node_id: NODE_A, wait: '-1' })).status, 400);
  });
});

