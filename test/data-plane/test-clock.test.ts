import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import type { SnapshotInput } from '../helpers/snapshot-builder.ts';

// The test clock (gateway/local/README.md "Test clock"): PUT /clock?ms= on
// unix:<prefix>/test-clock.sock moves ngx.now()/ngx.time() on every worker; key-auth
// credentials expire by it (kong.runloop.entities). Only with test_clock in kong_conf.json.

let node: TestNode;
let plain: TestNode;

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

const snapshot: SnapshotInput = {
  services: [{ name: 'none', url: 'http://127.0.0.1:1' }],
  routes: [{ service: 'none', paths: ['/clock'] }],
  consumers: [{ username: 'alice' }],
  keyauth_credentials: [{ consumer: 'alice', key: 'short-lived', expires_at: T0 / 1000 + 60.5, id: '11111111-1111-4111-8111-111111111111' }],
  plugins: [{ name: 'dp-probe', config: { tag: 'clock', report: 'clock', exit_phase: 'access', exit_status: 200, lookup_key: 'short-lived' } }],
};

function setClock(target: TestNode, ms: number | string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: join(target.prefix, 'test-clock.sock'), method: 'PUT', path: `/clock?ms=${ms}` }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

test.before(async () => {
  [node, plain] = await Promise.all([
    startTestNode({ plugins: ['dp-probe'], testClock: true, workerProcesses: 2, snapshot }),
    startTestNode({ plugins: ['dp-probe'], snapshot }),
  ]);
});

test.after.always(async () => {
  await Promise.all([node?.dispose(), plain?.dispose()]);
});

async function clockSeen(target: TestNode) {
  const res = await httpGet(target.url('/clock'));
  return { now: Number(res.headers['x-probe-now']), time: Number(res.headers['x-probe-time']), key: res.headers['x-probe-key-found'] };
}

test.serial('PUT /clock sets ngx.now() and ngx.time() for every worker', async (t) => {
  t.is(await setClock(node, T0 + 250), 204);
  const seen = await Promise.all(Array.from({ length: 20 }, () => clockSeen(node)));
  t.deepEqual(new Set(seen.map((s) => s.now)), new Set([(T0 + 250) / 1000]));
  t.deepEqual(new Set(seen.map((s) => s.time)), new Set([Math.floor((T0 + 250) / 1000)]));
});

test.serial('a key-auth credential expires when the clock passes its expires_at', async (t) => {
  await setClock(node, T0 + 60_000);
  t.is((await clockSeen(node)).key, '11111111-1111-4111-8111-111111111111');
  await setClock(node, T0 + 60_500);
  t.is((await clockSeen(node)).key, 'none', 'expires_at <= now: gone');
});

test('a bad value is refused', async (t) => {
  t.is(await setClock(node, 'soon'), 400);
  t.is(await setClock(node, -1), 400);
});

test('without test_clock there is no clock socket and ngx.now() is the real time', async (t) => {
  t.false(existsSync(join(plain.prefix, 'test-clock.sock')));
  const before = Date.now() / 1000;
  const { now } = await clockSeen(plain);
  t.true(now >= before - 1 && now <= Date.now() / 1000 + 1);
});
