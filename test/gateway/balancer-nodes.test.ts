// The cluster's balancer (gateway/local/cmd/balancer.ts, as compose's kong-lb) in front of
// stand-in nodes: a kept-alive connection that every node closes under it (a graceful reload, a
// worker killed) costs no 5xx, a node that is really gone is skipped without a failed try per
// request, when no node answers the balancer's 502 is in the API's Error shape, and the
// X-Forwarded-* headers the nodes trust from it are its own, never a client's. Its TLS listener
// serves Kong's TLS settings, DHE suites included.
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findNginx, startBalancer, type RunningBalancer } from '../../gateway/local/data-plane-entry.ts';
import { httpGet } from '../helpers/http-request.ts';
import { startResettingUpstream, type Reply, type ResettingUpstream } from '../helpers/upstream.ts';

interface Running {
  nodes: ResettingUpstream[];
  balancer: RunningBalancer;
  /** nginx's log lines (error_log stderr). */
  logs: string[];
}

/**
 * `count` stand-in nodes (answering as `reply`, default echoRequest) behind a balancer of their
 * own, with its TLS listener when `ssl`, all stopped when the test ends.
 */
async function balancerInFrontOf(t: ExecutionContext, count: number, reply?: Reply, ssl = false): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), 'balancer-'));
  const nodes: ResettingUpstream[] = [];
  const logs: string[] = [];
  t.teardown(async () => {
    await Promise.all(nodes.map((node) => node.close()));
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < count; i++) nodes.push(await startResettingUpstream(reply));
  const balancer = await startBalancer({
    dir,
    host: '127.0.0.1',
    port: 0,
    upstreams: nodes.map((node) => `127.0.0.1:${node.port}`),
    ...(ssl ? { ssl: { host: '127.0.0.1', port: 0 } } : {}),
    nginx: findNginx(),
    onLine: (line) => logs.push(line),
  });
  // ava runs teardowns last registered first: the balancer stops before its nodes
  t.teardown(() => balancer.stop());
  return { nodes, balancer, logs };
}

test('every node resets one kept-alive connection (both reloaded at once): no 502, the request is tried again and served', async (t) => {
  const { nodes, balancer, logs } = await balancerInFrontOf(t, 2);
  // round robin: one request each, whose connection the balancer keeps alive
  for (let i = 0; i < 2; i++) t.is((await httpGet(`${balancer.url}/warm`)).status, 200);
  t.deepEqual(nodes.map((node) => node.seen.length), [1, 1]);
  for (const node of nodes) node.resetNext();
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) statuses.push((await httpGet(`${balancer.url}/v1/pets`)).status);
  t.deepEqual(nodes.map((node) => node.resets), [1, 1], 'each node reset one connection');
  t.deepEqual([...new Set(statuses)], [200], `every answer a 200: ${statuses.join(' ')}`);
  // both nodes were marked down by their one failure; the same nodes as backups served meanwhile
  t.is(logs.filter((line) => line.includes('upstream server temporarily disabled')).length, 2, logs.join('\n'));
  t.false(logs.some((line) => line.includes('no live upstreams')), logs.join('\n'));
});

test('a node that is really gone: every request served by the other, and the gone one tried about once per 2 s, not once per request', async (t) => {
  const { nodes, balancer, logs } = await balancerInFrontOf(t, 2);
  await nodes[1]!.close();
  const statuses: number[] = [];
  const startedAt = Date.now();
  for (let i = 0; i < 20; i++) statuses.push((await httpGet(`${balancer.url}/v1/pets`)).status);
  const elapsedMs = Date.now() - startedAt;
  t.deepEqual([...new Set(statuses)], [200]);
  t.is(nodes[0]!.seen.length, 20);
  // fail_timeout=2s: one try when it first fails, then one each 2 s (max_fails=0 alone: ~10 here)
  const refused = logs.filter((line) => line.includes('connect() failed (111: Connection refused)'));
  t.true(refused.length >= 1 && refused.length <= 1 + Math.ceil(elapsedMs / 2000), `${elapsedMs} ms:\n${refused.join('\n')}`);
});

test("no node answers: the balancer's 502 is bad_gateway in the Error shape, not nginx's page; a node's own 502 and 504 pass untouched", async (t) => {
  const { nodes, balancer } = await balancerInFrontOf(t, 2, (req, res) => {
    const status = Number(req.url.slice(1));
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`the node said ${status}`);
  });
  for (const status of [502, 504]) {
    const own = await httpGet(`${balancer.url}/${status}`);
    t.is(own.status, status);
    t.is(own.body, `the node said ${status}`);
  }
  await Promise.all(nodes.map((node) => node.close()));
  for (const method of ['GET', 'POST']) {
    const response = await httpGet(`${balancer.url}/v1/pets`, { method, ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}) });
    t.is(response.status, 502, method);
    t.is(response.headers['content-type'], 'application/json; charset=utf-8', method);
    t.deepEqual(response.json, { code: 'bad_gateway', message: 'The service behind the gateway could not be reached.', status: 502 }, method);
  }
});

test("a client's X-Forwarded-Prefix and -Path do not pass: the nodes trust the balancer's X-Forwarded-*, and Kong derives these two itself", async (t) => {
  const { nodes, balancer } = await balancerInFrontOf(t, 1);
  const response = await httpGet(`${balancer.url}/v1/pets?limit=1`, {
    headers: { 'x-forwarded-prefix': '/evil', 'x-forwarded-path': '/evil/pets', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
  });
  t.is(response.status, 200);
  const seen = nodes[0]!.last()!.headers;
  t.is(seen['x-forwarded-prefix'], undefined);
  t.is(seen['x-forwarded-path'], undefined);
  // the others are the balancer's own, as before
  t.is(seen['x-forwarded-host'], '127.0.0.1');
  t.is(seen['x-forwarded-proto'], 'http');
});

test("the TLS listener serves Kong's DHE suites with the ffdhe2048 group (ssl_dhparam), as the nodes and kong-lb do", async (t) => {
  const { balancer } = await balancerInFrontOf(t, 1, undefined, true);
  const dhe = spawnSync('openssl', ['s_client', '-connect', new URL(balancer.sslUrl!).host, '-servername', 'localhost',
    '-tls1_2', '-cipher', 'DHE-RSA-AES128-GCM-SHA256'], { input: '', encoding: 'utf8', timeout: 10_000 });
  t.is(dhe.status, 0, dhe.stdout + dhe.stderr);
  t.regex(dhe.stdout, /Cipher\s*: DHE-RSA-AES128-GCM-SHA256/);
  t.regex(dhe.stdout, /Server Temp Key: DH, 2048 bits/);
});
