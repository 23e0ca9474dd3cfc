import test from 'ava';
import { describePlugins } from '../../gateway/local/data-plane-entry.ts';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { PLUGINS_DIR } from '../helpers/gateway-files.ts';
import { httpGet, type HttpResponse } from '../helpers/http-request.ts';
import { RawConnection } from '../helpers/raw-http.ts';
import type { SnapshotInput } from '../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { BUNDLED_PLUGINS, mockUpstream, plugin } from './plugins/kit.ts';

// animal-store-body-limit (gateway/plugins/animal-store-body-limit/): request-size-limiting's
// check (kong/plugins/request-size-limiting/handler.lua: 413, 417 for Expect: 100-continue, 411
// when a Content-Length is required) at a PRIORITY below rate-limiting's, so that its answers
// carry the rate-limit headers and count. The bundled plugin (951) runs before rate-limiting (910).

const KB = 1024;
let upstream: Upstream;
let node: TestNode;

function snapshot(): SnapshotInput {
  const limits = { minute: 100, limit_by: 'ip' };
  return {
    services: [{ name: 'mock', url: upstream.url }],
    routes: [
      { name: 'custom', service: 'mock', hosts: ['custom.test'] },
      { name: 'required', service: 'mock', hosts: ['required.test'] },
      { name: 'bundled', service: 'mock', hosts: ['bundled.test'] },
      { name: 'keyed', service: 'mock', hosts: ['keyed.test'] },
    ],
    // kong.yml's authentication: key-auth with an anonymous consumer that request-termination answers 401
    consumers: [{ username: 'anonymous' }, { username: 'alice' }],
    keyauth_credentials: [{ consumer: 'alice', key: 'alice-key' }],
    plugins: [
      plugin('rate-limiting', { route: 'custom' }, limits),
      plugin('rate-limiting', { route: 'required' }, limits),
      plugin('rate-limiting', { route: 'bundled' }, limits),
      { name: 'animal-store-body-limit', route: 'custom', config: { allowed_payload_size: 2, size_unit: 'kilobytes', require_content_length: false } },
      { name: 'animal-store-body-limit', route: 'required', config: { allowed_payload_size: 2, size_unit: 'kilobytes', require_content_length: true } },
      plugin('request-size-limiting', { route: 'bundled' }, { allowed_payload_size: 2, size_unit: 'kilobytes' }),
      plugin('key-auth', { route: 'keyed' }, { anonymous: 'anonymous', hide_credentials: true }),
      plugin('rate-limiting', { route: 'keyed' }, limits),
      { name: 'animal-store-body-limit', route: 'keyed', config: { allowed_payload_size: 2, size_unit: 'kilobytes', require_content_length: false } },
      plugin('request-termination', { consumer: 'anonymous' }, { status_code: 401, message: 'Unauthorized' }),
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(mockUpstream);
  node = await startTestNode({ plugins: [...BUNDLED_PLUGINS, 'animal-store-body-limit'], pluginsDir: PLUGINS_DIR, snapshot: snapshot() });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

function post(host: string, size: number, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return httpGet(node.url('/request'), { method: 'POST', headers: { host, 'content-length': String(size), ...headers }, body: 'a'.repeat(size) });
}

function chunked(host: string, size: number, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return httpGet(node.url('/request'), { method: 'POST', headers: { host, 'transfer-encoding': 'chunked', ...headers }, body: 'a'.repeat(size) });
}

test.serial('it runs after rate-limiting: its PRIORITY is below 910, request-size-limiting\'s is above', async (t) => {
  const { plugins } = await describePlugins({ plugins: ['animal-store-body-limit', 'rate-limiting', 'request-size-limiting'], pluginsDir: PLUGINS_DIR });
  const priority = Object.fromEntries(plugins.map((p) => [p.name, p.priority]));
  t.true(priority['animal-store-body-limit']! < priority['rate-limiting']!);
  t.true(priority['request-size-limiting']! > priority['rate-limiting']!);
});

test.serial('a Content-Length over the limit: 413 with the rate-limit headers, and it counts', async (t) => {
  const refused = await post('custom.test', 2 * KB + 1);
  t.is(refused.status, 413);
  t.is(refused.json.message, 'Request size limit exceeded');
  t.is(refused.headers['ratelimit-limit'], '100');
  const remaining = Number(refused.headers['ratelimit-remaining']);
  const next = await post('custom.test', 10);
  t.is(next.status, 200);
  t.is(Number(next.headers['ratelimit-remaining']), remaining - 1);
});

test.serial('the bundled plugin answers before rate-limiting runs: no rate-limit headers, not counted', async (t) => {
  const refused = await post('bundled.test', 2 * KB + 1);
  t.is(refused.status, 413);
  t.is(refused.headers['ratelimit-limit'], undefined);
});

test.serial('a body within the limit reaches the upstream whole', async (t) => {
  const res = await post('custom.test', 2 * KB);
  t.is(res.status, 200);
  t.is((res.json.post_data.text as string).length, 2 * KB);
});

test.serial('Expect: 100-continue over the limit: 417, with the headers', async (t) => {
  const res = await post('custom.test', 10 * KB, { expect: '100-continue' });
  t.is(res.status, 417);
  t.is(res.headers['ratelimit-limit'], '100');
});

test.serial('a chunked body is read and then judged: 413 over the limit, 200 within it', async (t) => {
  const over = await chunked('custom.test', 3 * KB);
  t.is(over.status, 413);
  t.is(over.headers['ratelimit-limit'], '100');
  t.is((await chunked('custom.test', KB)).status, 200);
});

test.serial('require_content_length: 411 without one, with the headers', async (t) => {
  const res = await httpGet(node.url('/request'), { headers: { host: 'required.test' } });
  t.is(res.status, 411);
  t.is(res.json.message, 'A valid Content-Length header is required');
  t.is(res.headers['ratelimit-limit'], '100');
});

// Authentication 4 of the spec: a missing or invalid key is 401, whatever the body. The anonymous
// consumer (key-auth authenticates it without a credential: kong/plugins/key-auth/handler.lua:
// 217-227) is answered by its request-termination (PRIORITY 2), after this plugin (901).
test.serial('no key or an unknown key: 401 whatever the body\'s size; a valid key: 413', async (t) => {
  for (const headers of [{}, { apikey: 'nobody-has-this' }] as Record<string, string>[]) {
    const refused = await post('keyed.test', 2 * KB + 1, headers);
    t.is(refused.status, 401);
    t.is(refused.json.message, 'Unauthorized');
    t.is(refused.headers['ratelimit-limit'], '100', 'counted, as any answer');
    t.is((await chunked('keyed.test', 3 * KB, headers)).status, 401);
  }
  const seen = upstream.seen.length;
  t.is((await post('keyed.test', 2 * KB + 1, { apikey: 'alice-key' })).status, 413);
  t.is((await chunked('keyed.test', 3 * KB, { apikey: 'alice-key' })).status, 413);
  t.is((await post('keyed.test', 2 * KB, { apikey: 'alice-key' })).status, 200);
  t.is(upstream.seen.length, seen + 1);
});

test.serial('no key, Expect: 100-continue and a body over the limit: 401 before the body is sent, no 100 Continue', async (t) => {
  const connection = await RawConnection.open(node.url('/'));
  t.teardown(() => connection.close());
  const size = 1024 * KB; // curl sends Expect: 100-continue for bodies over 1 MiB
  await connection.write(['POST /request HTTP/1.1', 'Host: keyed.test', `Content-Length: ${size}`, 'Expect: 100-continue', '', ''].join('\r\n'));
  const res = await connection.response();
  t.is(res.status, 401);
  t.deepEqual(res.interim, []);
  // a client that sends the body all the same: nginx reads it away and the connection serves on
  await connection.write('a'.repeat(size));
  await connection.write(['GET /request HTTP/1.1', 'Host: keyed.test', 'apikey: alice-key', '', ''].join('\r\n'));
  t.is((await connection.response()).status, 200);
});
