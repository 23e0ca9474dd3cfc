import ava from 'ava';
import { digestApiKey } from '../../../packages/provisioning/index.ts';
import { request } from '../../helpers/backend.ts';
import { requestWithHost } from '../../helpers/host-request.ts';
import { OUR_HOST, startStack, type TestStack } from '../../helpers/stack.ts';

// One gateway, two teams (issue 28, docs/shared-kong.md): the platform's file, ours with our host
// set, and team-inventory's (test/fixtures/team-inventory/kong.yml), each within its select tag.
// Their routes are served as if we were not there; each team's consumers pass only its own routes.
// serial: the tests read what reached their upstream last
const test = ava.serial;
let stack: TestStack;
let ours: string;
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-limit'];

test.before(async () => {
  stack = await startStack({ otherTeam: true });
  ours = await stack.provision('shared-alice', { minute: 100 });
});
test.after.always(async () => {
  await stack?.dispose();
});

const proxy = (path: string) => `${stack.gateway.proxyUrl}${path}`;

function assertNoneOfOurs(t: { is: (a: unknown, b: unknown, m?: string) => void }, headers: Headers, label: string) {
  for (const name of RATE_HEADERS) t.is(headers.get(name), null, `${label}: no ${name}`);
  t.is(headers.get('www-authenticate'), null, `${label}: no Bearer challenge`);
}

test('their open route needs no key and carries none of our headers, off our host', async (t) => {
  for (const host of [undefined, 'inventory.example']) {
    const response = host ? await requestWithHost(proxy('/inventory/items'), host) : await request(proxy('/inventory/items'));
    t.is(response.status, 200, String(host));
    t.deepEqual(response.body, { inventory: true });
    assertNoneOfOurs(t, response.headers, String(host));
    t.truthy(response.headers.get('x-inventory-request'), 'their own correlation-id plugin runs');
  }
  // what reached them: their request as sent, no rewriting of ours
  const sent = await request(proxy('/inventory/items'), { headers: { apikey: 'theirs', authorization: 'Bearer something' } });
  t.is(sent.status, 200);
  const seen = stack.otherTeam!.upstream.last()!;
  t.is(seen.headers.apikey, 'theirs');
  t.is(seen.headers.authorization, 'Bearer something');
  // our host is ours: a route with hosts outranks one without (Kong's router), so there our 404
  // route takes every path, theirs included (docs/shared-kong.md, "Hosts")
  const onOurHost = await requestWithHost(proxy('/inventory/items'), OUR_HOST);
  t.is(onOurHost.status, 404);
  t.is(onOurHost.body.code, 'not_found');
});

test('their body sizes: 100 KiB passes (ours would be 413), over their 1 MiB is their 413', async (t) => {
  const ok = await request(proxy('/inventory/items'), { method: 'POST', body: 'x'.repeat(100 * 1024) });
  t.is(ok.status, 200);
  t.is(stack.otherTeam!.upstream.last()!.body.length, 100 * 1024);
  const big = await request(proxy('/inventory/items'), { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) });
  t.is(big.status, 413);
  t.is(big.body.message, 'Request size limit exceeded', "Kong's own body, not our Error shape");
  t.is(big.body.code, undefined);
  assertNoneOfOurs(t, big.headers, '413');
});

test('their 404s are theirs, and a path nobody routes is Kong\'s 404 off our host', async (t) => {
  const missing = await request(proxy('/inventory/missing'));
  t.is(missing.status, 404);
  t.is(missing.body, 'no such item');
  assertNoneOfOurs(t, missing.headers, 'their 404');
  const nobody = await request(proxy('/shipping/status'));
  t.is(nobody.status, 404);
  t.is(nobody.body.message, 'no Route matched with those values');
  t.is(nobody.body.code, undefined);
  assertNoneOfOurs(t, nobody.headers, "nobody's path");
  const v1 = await request(proxy('/v1/pets'));
  t.is(v1.status, 404, 'our /v1 answers our host only');
  // on our host, our 404 (after our key-auth, as always)
  const ourNotFound = await stack.call('/shipping/status', { key: ours });
  t.is(ourNotFound.status, 404);
  t.is(ourNotFound.body.code, 'not_found');
});

// key-auth's messages: kong/plugins/key-auth/handler.lua:30-31 (Kong 3.9.3)
test('their consumer authenticates on their route; our key does not', async (t) => {
  const { key } = stack.otherTeam!;
  const theirs = await request(proxy('/inventory-private'), { headers: { apikey: digestApiKey(key) } });
  t.is(theirs.status, 200);
  t.is(stack.otherTeam!.upstream.last()!.headers['x-consumer-username'], 'inventory-warehouse');
  assertNoneOfOurs(t, theirs.headers, 'their consumer');
  for (const [label, headers] of [
    ['our key in their header', { apikey: ours }],
    ['our key as a Bearer token', { authorization: `Bearer ${ours}` }],
  ] as const) {
    const refused = await request(proxy('/inventory-private'), { headers });
    t.is(refused.status, 401, label);
    t.is(refused.body.message, label.includes('Bearer') ? 'No API key found in request' : 'Unauthorized', label);
    t.is(refused.body.code, undefined, label);
  }
  // Sent as the digest we store, our key is found by their key-auth (credentials are global in
  // Kong OSS): their own ACL plugin refuses our consumer (kong/plugins/acl/handler.lua, 403).
  const digest = await request(proxy('/inventory-private'), { headers: { apikey: digestApiKey(ours) } });
  t.is(digest.status, 403);
  t.is(digest.body.message, 'You cannot consume this service');
});

test('their consumer on our routes: 403 forbidden in our Error shape, with the rate headers', async (t) => {
  const { key } = stack.otherTeam!;
  for (const path of ['/v1/pets', '/v1/pets/1']) {
    const refused = await stack.call(path, { key });
    t.is(refused.status, 403, path);
    t.is(refused.body.code, 'forbidden', path);
    t.is(refused.body.status, 403, path);
    t.is(refused.headers.get('x-ratelimit-limit'), '60', path);
    t.truthy(refused.headers.get('x-ratelimit-reset'), path);
  }
  t.is((await stack.call('/v1/pets', { key: ours })).status, 200);
  const anonymous = await stack.call('/v1/pets');
  t.is(anonymous.status, 401);
  t.is(anonymous.body.code, 'missing_api_key');
});
