import test from 'ava';
import { startTestNode, type TestNode } from '../helpers/data-plane.ts';
import { httpGet } from '../helpers/http-request.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { PLUGIN_FIXTURES_DIR } from './plugins/kit.ts';

// kong.tools.request_headers: the request's headers kept current across the writes plugins make,
// which key-auth and request-size-limiting read in place of a new ngx.req.get_headers(). Each
// case makes writes through ngx_lua's own functions (the request-headers-probe fixture) and
// compares the kept table with a fresh ngx.req.get_headers() after them.

let upstream: Upstream;
let node: TestNode;

test.before(async () => {
  upstream = await startUpstream((_req, res) => {
    res.end('upstream');
  });
  node = await startTestNode({
    pluginsDir: PLUGIN_FIXTURES_DIR,
    plugins: ['request-headers-probe'],
    snapshot: {
      services: [{ name: 'svc', url: upstream.url }],
      routes: [{ name: 'probe', service: 'svc', paths: ['/probe'] }],
      plugins: [{ name: 'request-headers-probe', route: 'probe', config: {} }],
    },
  });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

type Op = ['set', string, unknown] | ['clear', string] | ['add', string, string] | ['body', string] | ['read'];

async function probe(ops: Op[], headers: Record<string, string | string[]> = {}) {
  const res = await httpGet(node.url('/probe'), { method: 'POST', headers: { ...headers, 'x-ops': JSON.stringify(ops).replaceAll('\u007f', '\\u007f') } });
  if (res.status !== 200) throw new Error(`probe answered ${res.status}: ${res.body}`);
  return res.json as { same: boolean; live: Record<string, unknown>; fresh: Record<string, unknown>; runloop_unchanged: boolean };
}

const CASES: [string, Op[]][] = [
  ['a new header, its name in mixed case', [['set', 'X-Added', 'digest-value']]],
  ['a header the request sent twice, replaced by one value', [['set', 'X-Multi', 'one']]],
  ['a header cleared, and one that was never there', [['clear', 'X-Multi'], ['clear', 'X-Absent']]],
  ['a header set, then cleared', [['set', 'X-Added', 'v'], ['clear', 'x-added']]],
  ['the edge plugin and key-auth: Authorization cleared, the key header set, then cleared', [['clear', 'authorization'], ['set', 'apikey', 'abc'], ['clear', 'apikey']]],
  ['the live table read first, then written to', [['read'], ['set', 'X-Added', 'v'], ['clear', 'X-Multi']]],
  ['an empty value (ngx_lua clears the header)', [['set', 'X-Multi', '']]],
  ['values with control characters', [['set', 'X-Tab', 'a\tb'], ['set', 'X-Newline', 'a\nb'], ['set', 'X-Del', 'a\u007fb']]],
  ['names that are not tokens', [['set', 'X Space', 'v'], ['set', 'X:Colon', 'v'], ['set', 'X-Ok', 'v']]],
  ['several values at once, a number, a boolean-like value', [['set', 'X-List', ['a', 'b']], ['set', 'X-Number', 42], ['set', 'X-True', 'true']]],
  ['ngx.req.add_header', [['add', 'X-Multi', 'three']]],
  ['the body replaced (Content-Length follows it)', [['body', 'a new body of some length']]],
  ['underscores in a name', [['set', 'X_Under', 'v'], ['clear', 'x-multi']]],
];

for (const [name, ops] of CASES) {
  test(`the kept headers are ngx.req.get_headers()' after the writes: ${name}`, async (t) => {
    const result = await probe(ops, { 'x-multi': ['a', 'b'], authorization: 'Bearer token', 'content-type': 'text/plain' });
    t.true(result.same, `live ${JSON.stringify(result.live)}\nfresh ${JSON.stringify(result.fresh)}`);
    t.true(result.runloop_unchanged, 'the runloop\'s own table (Kong\'s ctx.cached_request_headers) stays as it was read');
  });
}

test('a request of more than 100 headers: get_headers() reads 100, and writes past them are not guessed', async (t) => {
  const many: Record<string, string> = {};
  for (let i = 0; i < 120; i++) many[`x-h${i}`] = String(i);
  const result = await probe([['set', 'X-Added', 'v'], ['clear', 'x-h1']], many);
  t.true(result.same, `live ${JSON.stringify(result.live)}\nfresh ${JSON.stringify(result.fresh)}`);
  t.is(result.fresh['x-added'], undefined, 'the new header is past the 100 get_headers() reads');
});
