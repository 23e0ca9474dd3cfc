import test from 'ava';
import { startTestNode, type TestNode } from '../../helpers/data-plane.ts';
import { httpGet, type HttpResponse } from '../../helpers/http-request.ts';
import type { SnapshotInput } from '../../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, mockUpstream, plugin } from './kit.ts';

// Kong 3.9.3's spec/03-plugins/12-request-size-limiting/01-access_spec.lua, transcribed, on a
// data-plane node (SPEC:<line> below): a Content-Length is judged before the body is read; a
// chunked body is read (in memory below client_body_buffer_size, 8k, in a temp file above) and
// then judged.

const SPEC = 'spec/03-plugins/12-request-size-limiting/01-access_spec.lua';

const TEST_SIZE = 2;
const MB = 2 ** 20;
const KB = 2 ** 10;
const UNITS = { megabytes: MB, kilobytes: KB, bytes: 1 } as const;

let upstream: Upstream;
let node: TestNode;

function snapshot(): SnapshotInput {
  const units = Object.keys(UNITS);
  return {
    services: [{ name: 'mock', url: upstream.url }],
    routes: [
      { name: 'limit', service: 'mock', hosts: ['limit.test'] },
      { name: 'required', service: 'mock', hosts: ['required.test'] },
      ...units.map((unit) => ({ name: unit, service: 'mock', hosts: [`limit_${unit}.test`] })),
    ],
    plugins: [
      plugin('request-size-limiting', { route: 'limit' }, { allowed_payload_size: TEST_SIZE }),
      plugin('request-size-limiting', { route: 'required' }, { allowed_payload_size: TEST_SIZE, require_content_length: true }),
      ...units.map((unit) => plugin('request-size-limiting', { route: unit }, { allowed_payload_size: TEST_SIZE, size_unit: unit })),
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(mockUpstream);
  node = await startTestNode({ plugins: BUNDLED_PLUGINS, snapshot: snapshot() });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

/** POST with a Content-Length, as lua-resty-http sends a string body. */
function withLength(host: string, size: number, expect = false): Promise<HttpResponse> {
  const body = 'a'.repeat(size);
  const headers: Record<string, string> = { host, 'content-length': String(size) };
  if (expect) headers.expect = '100-continue';
  return httpGet(node.url('/request'), { method: 'POST', headers, body });
}

/** GET with a chunked body and no Content-Length, as the spec sends it. */
function chunked(host: string, size: number, expect = false): Promise<HttpResponse> {
  const headers: Record<string, string> = { host, 'transfer-encoding': 'chunked' };
  if (expect) headers.expect = '100-continue';
  return httpGet(node.url('/request'), { method: 'GET', headers, body: 'a'.repeat(size) });
}

/** What the upstream got: the whole body, when the request passed. */
const receivedLength = (res: HttpResponse) => (res.json.post_data.text as string).length;

function blocked(t: { is: (a: unknown, b: unknown) => void }, res: HttpResponse, status: number) {
  t.is(res.status, status);
  t.is(res.json.message, 'Request size limit exceeded');
}

// --- with Content-Length ---------------------------------------------------------------------

test(`Content-Length: works if size is lower than limit (${SPEC}:83)`, async (t) => {
  const res = await withLength('limit.test', TEST_SIZE * MB);
  t.is(res.status, 200);
  t.is(receivedLength(res), TEST_SIZE * MB);
});

test(`Content-Length: works if size is lower than limit and Expect header (${SPEC}:97)`, async (t) => {
  const res = await withLength('limit.test', TEST_SIZE * MB, true);
  t.is(res.status, 200);
});

test(`Content-Length: blocks if size is greater than limit (${SPEC}:112)`, async (t) => {
  blocked(t, await withLength('limit.test', TEST_SIZE * MB + 1), 413);
});

test(`Content-Length: blocks if size is greater than limit and Expect header (${SPEC}:129)`, async (t) => {
  blocked(t, await withLength('limit.test', TEST_SIZE * MB + 1, true), 417);
});

for (const [unit, factor] of Object.entries(UNITS)) {
  test(`Content-Length: blocks if size is greater than limit when unit in ${unit} (${SPEC}:148)`, async (t) => {
    blocked(t, await withLength(`limit_${unit}.test`, TEST_SIZE * factor + 1), 413);
  });

  test(`Content-Length: works if size is less than limit when unit in ${unit} (${SPEC}:167)`, async (t) => {
    const res = await withLength(`limit_${unit}.test`, TEST_SIZE * factor - 1);
    t.is(res.status, 200);
  });
}

// --- without Content-Length (chunked request body) ---------------------------------------------

test(`chunked > client_body_buffer_size: works if size is lower than limit (${SPEC}:185)`, async (t) => {
  const res = await chunked('limit.test', TEST_SIZE * MB);
  t.is(res.status, 200);
  t.is(receivedLength(res), TEST_SIZE * MB);
});

test(`chunked > client_body_buffer_size: works if size is lower than limit and Expect header (${SPEC}:200)`, async (t) => {
  const res = await chunked('limit.test', TEST_SIZE * MB, true);
  t.is(res.status, 200);
});

test(`chunked > client_body_buffer_size: blocks if size is greater than limit (${SPEC}:216)`, async (t) => {
  blocked(t, await chunked('limit.test', TEST_SIZE * MB + 1), 413);
});

test(`chunked > client_body_buffer_size: blocks if size is greater than limit and Expect header (${SPEC}:234)`, async (t) => {
  blocked(t, await chunked('limit.test', TEST_SIZE * MB + 1, true), 417);
});

test(`chunked < client_body_buffer_size: works if size is lower than limit (${SPEC}:255)`, async (t) => {
  const res = await chunked('limit_kilobytes.test', TEST_SIZE * KB);
  t.is(res.status, 200);
  t.is(receivedLength(res), TEST_SIZE * KB);
});

test(`chunked < client_body_buffer_size: works if size is lower than limit and Expect header (${SPEC}:270)`, async (t) => {
  const res = await chunked('limit_kilobytes.test', TEST_SIZE * KB, true);
  t.is(res.status, 200);
});

test(`chunked < client_body_buffer_size: blocks if size is greater than limit (${SPEC}:286)`, async (t) => {
  blocked(t, await chunked('limit_kilobytes.test', TEST_SIZE * KB + 1), 413);
});

test(`chunked < client_body_buffer_size: blocks if size is greater than limit and Expect header (${SPEC}:304)`, async (t) => {
  blocked(t, await chunked('limit_kilobytes.test', TEST_SIZE * KB + 1, true), 417);
});

for (const [unit, factor] of Object.entries(UNITS)) {
  test(`chunked: blocks if size is greater than limit when unit in ${unit} (${SPEC}:325)`, async (t) => {
    blocked(t, await chunked(`limit_${unit}.test`, TEST_SIZE * factor + 1), 413);
  });

  test(`chunked: works if size is less than limit when unit in ${unit} (${SPEC}:345)`, async (t) => {
    const res = await chunked(`limit_${unit}.test`, TEST_SIZE * factor);
    t.is(res.status, 200);
  });
}

// --- Content-Length header required --------------------------------------------------------------

test(`Content-Length required: blocks if header is not provided (${SPEC}:363)`, async (t) => {
  const res = await httpGet(node.url('/request'), { headers: { host: 'required.test' } });
  t.is(res.status, 411);
  t.is(res.json.message, 'A valid Content-Length header is required');
});

test('Content-Length required: a chunked body is read and judged (kong/plugins/request-size-limiting/handler.lua:50)', async (t) => {
  t.is((await chunked('required.test', 100)).status, 200);
  blocked(t, await chunked('required.test', TEST_SIZE * MB + 1), 413);
});
