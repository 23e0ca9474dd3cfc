import { createServer } from 'node:net';
import test from 'ava';
import { startTestNode, type TestNode } from '../../helpers/data-plane.ts';
import { httpGet, type HttpResponse } from '../../helpers/http-request.ts';
import type { SnapshotInput } from '../../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, mockUpstream, plugin } from './kit.ts';

// Kong 3.9.3's spec/03-plugins/11-correlation-id/01-access_spec.lua, transcribed, on a
// data-plane node with one worker (SPEC:<line> below). Not here: the #grpc case (no gRPC
// proxying) and "log serializer" (SPEC:474: it reads file-log's output; no file-log plugin here).
// Kong's error-generator-last becomes the dp-probe test plugin raising an error in access.
// SPEC:393-423 send Kong-Request-ID to the route whose header is Foo-Bar-Id, where it passes
// through untouched whatever the plugin does; here they send the header the plugin reads.

const SPEC = 'spec/03-plugins/11-correlation-id/01-access_spec.lua';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_COUNTER = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}#(\d+)$/;
// server_addr-server_port-pid-connection-connection_requests-now
const TRACKER = /^\d+\.\d+\.\d+\.\d+-\d+-\d+-\d+-\d+-\d{10}\.\d{3}$/;

let upstream: Upstream;
let node: TestNode;

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function snapshot(): Promise<SnapshotInput> {
  const route = (name: string, service = 'mock') => ({ name, service, hosts: [`${name}.test`] });
  return {
    services: [{ name: 'mock', url: upstream.url }, { name: 'nowhere', url: `http://127.0.0.1:${await closedPort()}` }],
    routes: [
      route('correlation1'), route('correlation2'), route('correlation3'), route('correlation-tracker'),
      route('correlation5'), route('correlation-timeout', 'nowhere'), route('correlation-error'),
    ],
    plugins: [
      plugin('correlation-id', { route: 'correlation1' }),
      plugin('correlation-id', { route: 'correlation2' }, { header_name: 'Foo-Bar-Id' }),
      plugin('correlation-id', { route: 'correlation3' }, { generator: 'uuid', echo_downstream: true }),
      plugin('correlation-id', { route: 'correlation-tracker' }, { generator: 'tracker' }),
      plugin('correlation-id', { route: 'correlation5' }, { generator: 'uuid', echo_downstream: true }),
      plugin('request-termination', { route: 'correlation5' }, { status_code: 418, message: "I'm a teapot" }),
      plugin('correlation-id', { route: 'correlation-timeout' }, { generator: 'uuid', echo_downstream: true }),
      plugin('correlation-id', { route: 'correlation-error' }, { generator: 'uuid', echo_downstream: true }),
      { name: 'dp-probe', route: 'correlation-error', config: { tag: 'error-generator', error_phase: 'access' } },
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(mockUpstream);
  node = await startTestNode({ plugins: [...BUNDLED_PLUGINS, 'dp-probe'], snapshot: await snapshot() });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

function get(host: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return httpGet(node.url('/request'), { headers: { host, accept: 'application/json', ...headers } });
}

/** The header as the upstream received it (mockUpstream describes the request). */
const upstreamHeader = (res: HttpResponse, name: string): string | undefined => res.json?.headers?.[name];

// serial tests run first: nothing else has drawn from the worker's counter yet
test.serial(`uuid-worker generator: increments the counter part (${SPEC}:204)`, async (t) => {
  const id1 = upstreamHeader(await get('correlation1.test'), 'kong-request-id');
  const id2 = upstreamHeader(await get('correlation1.test'), 'kong-request-id');
  t.regex(id1!, UUID_COUNTER);
  t.regex(id2!, UUID_COUNTER);
  t.not(id1, id2);
  t.is(UUID_COUNTER.exec(id1!)![1], '1');
  t.is(UUID_COUNTER.exec(id2!)![1], '2');
  t.is(id1!.split('#')[0], id2!.split('#')[0], 'one worker, one uuid');
});

test(`uuid generator: generates a unique UUID for every request (${SPEC}:272)`, async (t) => {
  const id1 = upstreamHeader(await get('correlation3.test'), 'kong-request-id');
  const id2 = upstreamHeader(await get('correlation3.test'), 'kong-request-id');
  t.regex(id1!, UUID);
  t.regex(id2!, UUID);
  t.not(id1, id2);
});

test(`tracker generator: generates a unique tracker id for every request (${SPEC}:301)`, async (t) => {
  const id1 = upstreamHeader(await get('correlation-tracker.test'), 'kong-request-id');
  const id2 = upstreamHeader(await get('correlation-tracker.test'), 'kong-request-id');
  t.regex(id1!, TRACKER);
  t.regex(id2!, TRACKER);
  t.not(id1, id2);
});

test(`echo_downstream sends uuid back to client (${SPEC}:330)`, async (t) => {
  const res = await get('correlation3.test');
  t.is(res.status, 200);
  const upstreamId = upstreamHeader(res, 'kong-request-id');
  t.regex(upstreamId!, UUID);
  t.is(res.headers['kong-request-id'], upstreamId);
});

test(`echo_downstream sends uuid back to client even when upstream timeouts (${SPEC}:345)`, async (t) => {
  const res = await get('correlation-timeout.test');
  t.is(res.status, 502);
  t.regex(String(res.headers['kong-request-id']), UUID);
});

test(`echo_downstream sends uuid back to client even there is a runtime error (${SPEC}:356)`, async (t) => {
  const res = await get('correlation-error.test');
  t.is(res.status, 500);
  t.regex(String(res.headers['kong-request-id']), UUID);
});

test(`echo_downstream does not send uuid back to client if not asked (${SPEC}:367)`, async (t) => {
  const res = await get('correlation2.test');
  t.is(res.status, 200);
  t.is(res.headers['kong-request-id'], undefined);
  t.is(res.headers['foo-bar-id'], undefined);
});

test(`uses a custom header name (${SPEC}:378)`, async (t) => {
  const res = await get('correlation2.test');
  t.regex(upstreamHeader(res, 'foo-bar-id')!, UUID_COUNTER);
});

test(`preserves an already existing header (${SPEC}:393)`, async (t) => {
  const res = await get('correlation2.test', { 'Foo-Bar-Id': 'foobar' });
  t.is(upstreamHeader(res, 'foo-bar-id'), 'foobar');
});

test(`does not preserve an already existing empty header (${SPEC}:408)`, async (t) => {
  const res = await get('correlation2.test', { 'Foo-Bar-Id': '' });
  t.regex(upstreamHeader(res, 'foo-bar-id')!, UUID_COUNTER);
});

test(`does not preserve an already existing header with space only (${SPEC}:423)`, async (t) => {
  const res = await get('correlation2.test', { 'Foo-Bar-Id': ' ' });
  t.regex(upstreamHeader(res, 'foo-bar-id')!, UUID_COUNTER);
});

test(`executes with echo_downstream when access did not execute (${SPEC}:438)`, async (t) => {
  const res = await get('correlation5.test');
  t.is(res.status, 418);
  t.deepEqual(res.json, { message: "I'm a teapot" });
  t.regex(String(res.headers['kong-request-id']), UUID);
});

test(`echoes incoming with echo_downstream when access did not execute (${SPEC}:451)`, async (t) => {
  const res = await get('correlation5.test', { 'kong-request-id': 'my very personal id' });
  t.is(res.status, 418);
  t.is(res.headers['kong-request-id'], 'my very personal id');
});
