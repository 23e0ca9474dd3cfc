import test from 'ava';
import { startTestNode, type TestNode } from '../../helpers/data-plane.ts';
import { httpGet, type HttpResponse } from '../../helpers/http-request.ts';
import type { SnapshotInput } from '../../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, logged, mockUpstream, plugin, setClock } from './kit.ts';

// Kong 3.9.3's spec/03-plugins/09-key-auth/02-access_spec.lua, transcribed, on a data-plane node
// (SPEC:<line> below). Not here: key_in_body (the control plane refuses it), gRPC (no gRPC
// proxying), basic-auth (not a plugin of ours: the logical AND/OR cases use the dp-probe test
// plugin, which authenticates a consumer with a credential, as the other auth plugin).

const SPEC = 'spec/03-plugins/09-key-auth/02-access_spec.lua';

let upstream: Upstream;
let node: TestNode;

const ANONYMOUS_ID = '00000000-0000-4000-8000-00000000a000';
const BOB_ID = '00000000-0000-4000-8000-00000000b0b0';
const KONG_CRED_ID = '00000000-0000-4000-8000-0000000c0de0';
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const TTL = 10;

function snapshot(): SnapshotInput {
  const hosts = ['key-auth1', 'key-auth2', 'key-auth3', 'key-auth4', 'key-auth5', 'key-auth7', 'key-auth8', 'key-auth9', 'key-auth10', 'key-ttl', 'logical-and', 'logical-or', 'custom-id'];
  const combos = ['ttf', 'tff', 'fff', 'ftf'];
  return {
    services: [{ name: 'mock', url: upstream.url }, { name: 'status', url: `${upstream.url}/status/200` }],
    routes: [
      ...hosts.map((host) => ({ name: host, service: 'mock', hosts: [`${host}.test`] })),
      ...combos.map((combo) => ({ name: combo, service: 'status', paths: [`/${combo}`] })),
    ],
    consumers: [
      { id: ANONYMOUS_ID, username: 'no-body' },
      { id: BOB_ID, username: 'bob' },
      { username: 'Jafar' },
      { username: 'Mickey' },
      { username: 'Aladdin' },
      { username: 'carol', custom_id: 'carol-42' },
    ],
    keyauth_credentials: [
      { id: KONG_CRED_ID, consumer: 'bob', key: 'kong' },
      { consumer: 'Jafar', key: 'jafar-ttl', expires_at: T0 / 1000 + TTL },
      { consumer: 'Mickey', key: 'Mouse' },
      { consumer: 'bob', key: 'right' },
      { consumer: 'carol', key: 'carol-key' },
    ],
    plugins: [
      plugin('key-auth', { route: 'key-auth1' }),
      plugin('key-auth', { route: 'key-auth2' }, { hide_credentials: true, realm: 'test-realm' }),
      plugin('key-auth', { route: 'key-auth3' }, { anonymous: ANONYMOUS_ID }),
      plugin('key-auth', { route: 'key-auth4' }, { anonymous: '00000000-0000-4000-8000-0000000dead0' }),
      plugin('key-auth', { route: 'key-auth5' }, { key_in_body: true }),
      plugin('key-auth', { route: 'key-auth7' }, { run_on_preflight: false }),
      plugin('key-auth', { route: 'key-auth8' }, { key_names: ['api_key'] }),
      plugin('key-auth', { route: 'key-auth9' }, { key_names: ['api-key'] }),
      plugin('key-auth', { route: 'key-auth10' }, { anonymous: 'no-body' }),
      plugin('key-auth', { route: 'key-ttl' }),
      plugin('key-auth', { route: 'custom-id' }),
      // logical AND / OR: dp-probe (PRIORITY 5000) authenticates Aladdin with a credential first
      { name: 'dp-probe', route: 'logical-and', config: { tag: 'other-auth', authenticate: 'Aladdin' } },
      plugin('key-auth', { route: 'logical-and' }),
      { name: 'dp-probe', route: 'logical-or', config: { tag: 'other-auth', authenticate: 'Aladdin' } },
      plugin('key-auth', { route: 'logical-or' }, { anonymous: ANONYMOUS_ID }),
      // SPEC:1144 the combinations without key_in_body (ttt, fft, tft need it)
      plugin('key-auth', { route: 'ttf' }, { key_in_header: true, key_in_query: true }),
      plugin('key-auth', { route: 'tff' }, { key_in_header: true, key_in_query: false }),
      plugin('key-auth', { route: 'fff' }, { key_in_header: false, key_in_query: false }),
      plugin('key-auth', { route: 'ftf' }, { key_in_header: false, key_in_query: true }),
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(mockUpstream);
  node = await startTestNode({ plugins: [...BUNDLED_PLUGINS, 'dp-probe'], testClock: true, snapshot: snapshot() });
  await setClock(node, T0);
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

function get(host: string, path: string, headers: Record<string, string | string[]> = {}, method = 'GET'): Promise<HttpResponse> {
  return httpGet(node.url(path), { method, headers: { host, ...headers } });
}

/** What the upstream received: mockUpstream's description of the request. */
type UpstreamView = { headers: Record<string, string>; uri_args: Record<string, string>; vars: { request_uri: string } };
const upstreamSaw = (res: HttpResponse) => res.json as UpstreamView;

// --- Unauthorized --------------------------------------------------------------------------

test(`returns 200 on OPTIONS requests if run_on_preflight is false (${SPEC}:195)`, async (t) => {
  const res = await get('key-auth7.test', '/status/200', {}, 'OPTIONS');
  t.is(res.status, 200);
});

test(`returns Unauthorized on OPTIONS requests if run_on_preflight is true (${SPEC}:205)`, async (t) => {
  const res = await get('key-auth1.test', '/status/200', {}, 'OPTIONS');
  t.is(res.status, 401);
  t.is(res.json.message, 'No API key found in request');
});

test(`returns Unauthorized on missing credentials (${SPEC}:219)`, async (t) => {
  const res = await get('key-auth1.test', '/status/200');
  t.is(res.status, 401);
  t.is(res.json.message, 'No API key found in request');
});

test(`returns Unauthorized on empty key header, no realm: WWW-Authenticate Key (${SPEC}:232, :247)`, async (t) => {
  const res = await get('key-auth1.test', '/status/200', { apikey: '' });
  t.is(res.status, 401);
  t.is(res.json.message, 'No API key found in request');
  t.is(res.headers['www-authenticate'], 'Key');
});

test(`returns Unauthorized on empty key header with configured realm (${SPEC}:264)`, async (t) => {
  const res = await get('key-auth2.test', '/status/200', { apikey: '' });
  t.is(res.status, 401);
  t.is(res.json.message, 'No API key found in request');
  t.is(res.headers['www-authenticate'], 'Key realm="test-realm"');
});

test(`returns Unauthorized on empty key querystring (${SPEC}:281)`, async (t) => {
  const res = await get('key-auth1.test', '/status/200?apikey');
  t.is(res.status, 401);
  t.is(res.json.message, 'No API key found in request');
  t.is(res.headers['www-authenticate'], 'Key');
});

test(`returns WWW-Authenticate header on missing credentials (${SPEC}:295)`, async (t) => {
  const res = await get('key-auth1.test', '/status/200');
  t.is(res.headers['www-authenticate'], 'Key');
});

// --- key in querystring ----------------------------------------------------------------------

test(`querystring: authenticates valid credentials (${SPEC}:309)`, async (t) => {
  const res = await get('key-auth1.test', '/request?apikey=kong');
  t.is(res.status, 200);
});

test(`querystring: returns 401 Unauthorized on invalid key (${SPEC}:319)`, async (t) => {
  const res = await get('key-auth1.test', '/status/200?apikey=123');
  t.is(res.status, 401);
  t.is(res.json.message, 'Unauthorized');
  t.is(res.headers['www-authenticate'], 'Key');
});

test(`querystring: handles duplicated key (${SPEC}:333)`, async (t) => {
  const res = await get('key-auth1.test', '/status/200?apikey=kong&apikey=kong');
  t.is(res.status, 401);
  t.is(res.json.message, 'Duplicate API key found');
  t.is(res.headers['www-authenticate'], 'Key');
});

// --- key in request body ----------------------------------------------------------------------

test(`key in request body: refused (${SPEC}:349-480 and the key_in_body combinations)`, async (t) => {
  // The control plane refuses config.key_in_body; a node given one anyway fails the request
  // loudly rather than authenticate without it.
  const res = await httpGet(node.url('/request'), {
    method: 'POST',
    headers: { host: 'key-auth5.test', 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: 'apikey=kong',
  });
  t.is(res.status, 500);
  t.is(res.json.message, 'An unexpected error occurred');
  await logged(node, /config\.key_in_body is not supported by the local gateway/);
});

// --- key in headers --------------------------------------------------------------------------

test(`headers: authenticates valid credentials (${SPEC}:484)`, async (t) => {
  const res = await get('key-auth1.test', '/request', { apikey: 'kong' });
  t.is(res.status, 200);
});

test(`headers: returns 401 Unauthorized on invalid key (${SPEC}:495)`, async (t) => {
  const res = await get('key-auth1.test', '/status/200', { apikey: '123' });
  t.is(res.status, 401);
  t.is(res.json.message, 'Unauthorized');
});

test('headers: a key sent twice is a duplicate (kong/plugins/key-auth/handler.lua:166)', async (t) => {
  const res = await get('key-auth1.test', '/status/200', { apikey: ['kong', 'kong'] });
  t.is(res.status, 401);
  t.is(res.json.message, 'Duplicate API key found');
  t.is(res.headers['www-authenticate'], 'Key');
});

test(`underscores or hyphens in key headers: authenticates valid credentials (${SPEC}:533)`, async (t) => {
  t.is((await get('key-auth8.test', '/request', { api_key: 'kong' })).status, 200);
  t.is((await get('key-auth8.test', '/request', { 'api-key': 'kong' })).status, 200);
  // ngx.req.get_headers()'s lookup turns "_" into "-", never the reverse: a name configured with a
  // hyphen does not find the underscore form (Kong reads headers[name] the same way)
  t.is((await get('key-auth9.test', '/request', { 'api-key': 'kong' })).status, 200);
  t.is((await get('key-auth9.test', '/request', { api_key: 'kong' })).status, 401);
});

test(`underscores or hyphens in key headers: returns 401 Unauthorized on invalid key (${SPEC}:555)`, async (t) => {
  for (const name of ['api_key', 'api-key']) {
    const res = await get('key-auth8.test', '/status/200', { [name]: '123' });
    t.is(res.status, 401, name);
    t.is(res.json.message, 'Unauthorized');
    t.is(res.headers['www-authenticate'], 'Key');
  }
});

// --- Consumer headers ------------------------------------------------------------------------

test(`sends Consumer headers to upstream (${SPEC}:587)`, async (t) => {
  const res = await get('key-auth1.test', '/request?apikey=kong');
  t.is(res.status, 200);
  const { headers } = upstreamSaw(res);
  t.is(headers['x-consumer-id'], BOB_ID);
  t.is(headers['x-consumer-username'], 'bob');
  t.is(headers['x-credential-identifier'], KONG_CRED_ID);
  t.is(headers['x-anonymous-consumer'], undefined);
  t.is(headers['x-consumer-custom-id'], undefined);
});

test('sends X-Consumer-Custom-ID and clears what the client sent (kong/plugins/key-auth/handler.lua:52-89)', async (t) => {
  const res = await get('custom-id.test', '/request', {
    apikey: 'carol-key',
    'x-consumer-username': 'forged',
    'x-anonymous-consumer': 'true',
  });
  const { headers } = upstreamSaw(res);
  t.is(headers['x-consumer-custom-id'], 'carol-42');
  t.is(headers['x-consumer-username'], 'carol');
  t.is(headers['x-anonymous-consumer'], undefined);
});

// --- config.hide_credentials -------------------------------------------------------------------

test(`hide_credentials false sends the key to upstream: query and header (${SPEC}:659)`, async (t) => {
  t.is(upstreamSaw(await get('key-auth1.test', '/request?apikey=kong')).uri_args.apikey, 'kong');
  t.is(upstreamSaw(await get('key-auth1.test', '/request', { apikey: 'kong' })).headers.apikey, 'kong');
});

test(`hide_credentials true doesn't send the key to upstream: query and header (${SPEC}:670)`, async (t) => {
  t.is(upstreamSaw(await get('key-auth2.test', '/request?apikey=kong')).uri_args.apikey, undefined);
  t.is(upstreamSaw(await get('key-auth2.test', '/request', { apikey: 'kong' })).headers.apikey, undefined);
});

test(`does not remove apikey and preserves order of query parameters (${SPEC}:716)`, async (t) => {
  const res = await get('key-auth1.test', '/request?c=value1&b=value2&apikey=kong&a=value3');
  t.is(res.status, 200);
  t.is(upstreamSaw(res).vars.request_uri, '/request?c=value1&b=value2&apikey=kong&a=value3');
});

test(`removes apikey and preserves order of query parameters (${SPEC}:730)`, async (t) => {
  const res = await get('key-auth2.test', '/request?c=value1&b=value2&apikey=kong&a=value3');
  t.is(res.status, 200);
  t.is(upstreamSaw(res).vars.request_uri, '/request?c=value1&b=value2&a=value3');
});

test(`removes apikey in encoded query and preserves order of query parameters (${SPEC}:744)`, async (t) => {
  const res = await get('key-auth2.test', '/request?c=valu%651&b=value2&api%6B%65%79=kong&a=valu%653');
  t.is(res.status, 200);
  t.is(upstreamSaw(res).vars.request_uri, '/request?c=value1&b=value2&a=value3');
});

// --- config.anonymous --------------------------------------------------------------------------

test(`anonymous: works with right credentials (${SPEC}:760)`, async (t) => {
  const res = await get('key-auth3.test', '/request?apikey=kong');
  t.is(res.status, 200);
  const { headers } = upstreamSaw(res);
  t.is(headers['x-consumer-username'], 'bob');
  t.is(headers['x-credential-identifier'], KONG_CRED_ID);
  t.is(headers['x-anonymous-consumer'], undefined);
});

test(`anonymous: works with wrong credentials (${SPEC}:773)`, async (t) => {
  const res = await get('key-auth3.test', '/request');
  t.is(res.status, 200);
  const { headers } = upstreamSaw(res);
  t.is(headers['x-anonymous-consumer'], 'true');
  t.is(headers['x-credential-identifier'], undefined);
  t.is(headers['x-consumer-username'], 'no-body');
  t.is(headers['x-consumer-id'], ANONYMOUS_ID);
});

test(`anonymous: works with wrong credentials and username as anonymous (${SPEC}:786)`, async (t) => {
  const res = await get('key-auth10.test', '/request');
  t.is(res.status, 200);
  const { headers } = upstreamSaw(res);
  t.is(headers['x-anonymous-consumer'], 'true');
  t.is(headers['x-consumer-username'], 'no-body');
});

test(`anonymous: errors when anonymous user doesn't exist (${SPEC}:798)`, async (t) => {
  const res = await get('key-auth4.test', '/request', { accept: 'application/json' });
  t.is(res.status, 500);
  t.is(res.json.message, 'An unexpected error occurred');
});

// --- multiple auth: key-auth with another auth plugin (dp-probe, run before it) ------------------

test(`logical AND: key-auth fails 401 although the other plugin authenticated (${SPEC}:938)`, async (t) => {
  const res = await get('logical-and.test', '/request');
  t.is(res.status, 401);
  t.is(res.headers['www-authenticate'], 'Key');
});

test(`logical AND: passes with all credentials provided, key-auth's consumer last (${SPEC}:908)`, async (t) => {
  const res = await get('logical-and.test', '/request', { apikey: 'Mouse' });
  t.is(res.status, 200);
  const { headers } = upstreamSaw(res);
  t.is(headers['x-anonymous-consumer'], undefined);
  t.is(headers['x-consumer-username'], 'Mickey');
});

test(`logical OR: passes with only the other credential; key-auth leaves it be (${SPEC}:998)`, async (t) => {
  const res = await get('logical-or.test', '/request');
  t.is(res.status, 200);
  const { headers } = upstreamSaw(res);
  t.is(headers['x-anonymous-consumer'], undefined);
  t.is(headers['x-consumer-id'], undefined, 'key-auth skipped: an earlier plugin set a credential');
});

test(`logical OR: passes with all credentials provided, key-auth does not run again (${SPEC}:965)`, async (t) => {
  const res = await get('logical-or.test', '/request', { apikey: 'Mouse' });
  t.is(res.status, 200);
  t.is(upstreamSaw(res).headers['x-consumer-username'], undefined);
});

// --- auto-expiring keys ------------------------------------------------------------------------

test.serial(`auto-expiring keys: authenticate for up to 'ttl' (${SPEC}:1082)`, async (t) => {
  await setClock(node, T0 + (TTL - 1) * 1000);
  t.is((await get('key-ttl.test', '/status/200', { apikey: 'jafar-ttl' })).status, 200);
  await setClock(node, T0 + TTL * 1000);
  const res = await get('key-ttl.test', '/status/200', { apikey: 'jafar-ttl' });
  t.is(res.status, 401);
  t.is(res.json.message, 'Unauthorized');
  await setClock(node, T0);
});

// --- key_in_header / key_in_query combinations --------------------------------------------------

// header, query, body (sent as a form: ignored, key_in_body is off on these routes), path, status
const COMBINATIONS: Array<[string | null, string | null, string | null, string, number, number]> = [
  ['right', 'right', 'right', '/ttf', 200, 2], ['right', 'right', 'right', '/tff', 200, 3],
  ['right', 'right', 'right', '/fff', 401, 4], ['right', 'right', 'right', '/ftf', 200, 7],
  ['right', 'right', 'wrong', '/ttf', 200, 9], ['right', 'right', 'wrong', '/tff', 200, 10],
  ['right', 'right', 'wrong', '/fff', 401, 11], ['right', 'right', 'wrong', '/ftf', 200, 14],
  ['right', 'wrong', 'wrong', '/ttf', 200, 16], ['right', 'wrong', 'wrong', '/tff', 200, 17],
  ['right', 'wrong', 'wrong', '/fff', 401, 18], ['right', 'wrong', 'wrong', '/ftf', 401, 21],
  ['wrong', 'wrong', 'wrong', '/ttf', 401, 23], ['wrong', 'wrong', 'wrong', '/tff', 401, 24],
  ['wrong', 'wrong', 'wrong', '/fff', 401, 25], ['wrong', 'wrong', 'wrong', '/ftf', 401, 28],
  ['wrong', 'wrong', 'right', '/ttf', 401, 30], ['wrong', 'wrong', 'right', '/tff', 401, 31],
  ['wrong', 'wrong', 'right', '/fff', 401, 32], ['wrong', 'wrong', 'right', '/ftf', 401, 35],
  ['right', 'wrong', 'right', '/ttf', 200, 37], ['right', 'wrong', 'right', '/tff', 200, 38],
  ['right', 'wrong', 'right', '/fff', 401, 39], ['right', 'wrong', 'right', '/ftf', 401, 42],
  ['wrong', 'right', 'wrong', '/ttf', 401, 44], ['wrong', 'right', 'wrong', '/tff', 401, 45],
  ['wrong', 'right', 'wrong', '/fff', 401, 46], ['wrong', 'right', 'wrong', '/ftf', 200, 49],
  [null, null, null, '/ttf', 401, 51], [null, null, null, '/tff', 401, 52],
  [null, null, null, '/fff', 401, 53], [null, null, null, '/ftf', 401, 56],
  [null, null, 'wrong', '/ttf', 401, 58], [null, null, 'wrong', '/tff', 401, 59],
  [null, null, 'wrong', '/fff', 401, 60], [null, null, 'wrong', '/ftf', 401, 63],
  [null, 'wrong', 'wrong', '/ttf', 401, 65], [null, 'wrong', 'wrong', '/tff', 401, 66],
  [null, 'wrong', 'wrong', '/fff', 401, 67], [null, 'wrong', 'wrong', '/ftf', 401, 70],
  ['wrong', 'wrong', null, '/ttf', 401, 72], ['wrong', 'wrong', null, '/tff', 401, 73],
  ['wrong', 'wrong', null, '/fff', 401, 74], ['wrong', 'wrong', null, '/ftf', 401, 77],
  [null, 'wrong', null, '/ttf', 401, 79], [null, 'wrong', null, '/tff', 401, 80],
  [null, 'wrong', null, '/fff', 401, 81], [null, 'wrong', null, '/ftf', 401, 84],
  ['wrong', null, 'wrong', '/ttf', 401, 86], ['wrong', null, 'wrong', '/tff', 401, 87],
  ['wrong', null, 'wrong', '/fff', 401, 88], ['wrong', null, 'wrong', '/ftf', 401, 91],
  ['right', 'right', null, '/ttf', 200, 93], ['right', 'right', null, '/tff', 200, 94],
  ['right', 'right', null, '/fff', 401, 95], ['right', 'right', null, '/ftf', 200, 98],
  ['right', null, null, '/ttf', 200, 100], ['right', null, null, '/tff', 200, 101],
  ['right', null, null, '/fff', 401, 102], ['right', null, null, '/ftf', 401, 105],
  [null, null, 'right', '/ttf', 401, 107], [null, null, 'right', '/tff', 401, 108],
  [null, null, 'right', '/fff', 401, 109], [null, null, 'right', '/ftf', 401, 112],
  ['right', null, 'right', '/ttf', 200, 114], ['right', null, 'right', '/tff', 200, 115],
  ['right', null, 'right', '/fff', 401, 116], ['right', null, 'right', '/ftf', 401, 119],
  [null, 'right', null, '/ttf', 200, 121], [null, 'right', null, '/tff', 401, 122],
  [null, 'right', null, '/fff', 401, 123], [null, 'right', null, '/ftf', 200, 126],
  [null, 'right', 'wrong', '/ttf', 200, 128], [null, 'right', 'wrong', '/tff', 401, 129],
  [null, 'right', 'wrong', '/fff', 401, 130], [null, 'right', 'wrong', '/ftf', 200, 133],
  ['right', 'wrong', null, '/ttf', 200, 135], ['right', 'wrong', null, '/tff', 200, 136],
  ['right', 'wrong', null, '/fff', 401, 137], ['right', 'wrong', null, '/ftf', 401, 140],
  ['right', null, 'wrong', '/ttf', 200, 142], ['right', null, 'wrong', '/tff', 200, 143],
  ['right', null, 'wrong', '/fff', 401, 144], ['right', null, 'wrong', '/ftf', 401, 147],
  [null, 'wrong', 'right', '/ttf', 401, 149], [null, 'wrong', 'right', '/tff', 401, 150],
  [null, 'wrong', 'right', '/fff', 401, 151], [null, 'wrong', 'right', '/ftf', 401, 154],
  ['wrong', 'right', null, '/ttf', 401, 156], ['wrong', 'right', null, '/tff', 401, 157],
  ['wrong', 'right', null, '/fff', 401, 158], ['wrong', 'right', null, '/ftf', 200, 161],
  ['wrong', null, 'right', '/ttf', 401, 163], ['wrong', null, 'right', '/tff', 401, 164],
  ['wrong', null, 'right', '/fff', 401, 165], ['wrong', null, 'right', '/ftf', 401, 168],
];

for (const [header, query, body, path, status, index] of COMBINATIONS) {
  const input = [header, query, body].map((v) => (v ?? 'n')[0]).join('');
  test(`combination #${index} (${input} => ${path.slice(1)}) works (${SPEC}:1363)`, async (t) => {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (header) headers.apikey = header;
    const res = await httpGet(node.url(path + (query ? `?apikey=${query}` : '')), {
      method: 'POST',
      headers,
      body: body ? `apikey=${body}` : undefined,
    });
    t.is(res.status, status);
    if (status === 401) t.is(res.headers['www-authenticate'], 'Key');
  });
}
