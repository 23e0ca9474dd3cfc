import test from 'ava';
import { startFixture, type Fixture } from '../helpers/fixture.ts';

// Expectations from kong/plugins/key-auth/handler.lua and schema.lua (Kong 3.9.1).
let f: Fixture;
let aliceId: string;

test.before(async () => {
  f = await startFixture(`
_format_version: "3.0"
services:
  - name: echo
    url: \${UPSTREAM}
    routes:
      - name: plain
        paths: [/plain]
        plugins:
          - name: key-auth
      - name: realm
        paths: [/realm]
        plugins:
          - name: key-auth
            config: { realm: test-realm }
      - name: hidden
        paths: [/hidden]
        plugins:
          - name: key-auth
            config: { hide_credentials: true }
      - name: anonymous
        paths: [/anonymous]
        plugins:
          - name: key-auth
            config: { anonymous: guest }
      - name: preflight
        paths: [/preflight]
        plugins:
          - name: key-auth
            config: { run_on_preflight: false }
consumers:
  - username: alice
    custom_id: c-1
    keyauth_credentials:
      - key: k-alice
  - username: guest
`);
  const alice = await f.admin('/consumers/alice');
  aliceId = alice.body.id;
});
test.after.always(async () => {
  await f?.dispose();
});

test.serial('no key: 401 "No API key found in request" with WWW-Authenticate: Key', async (t) => {
  const response = await f.call('/plain');
  t.is(response.status, 401);
  t.is(response.body.message, 'No API key found in request');
  t.regex(response.body.request_id, /^[0-9a-f]{32}$/);
  t.is(response.headers.get('www-authenticate'), 'Key');
});

test.serial('an unknown key: 401 "Unauthorized"', async (t) => {
  const response = await f.call('/plain', { headers: { apikey: 'nope' } });
  t.is(response.status, 401);
  t.is(response.body.message, 'Unauthorized');
});

test.serial('the key twice: 401 "Duplicate API key found"', async (t) => {
  const response = await f.call('/plain?apikey=k-alice&apikey=k-alice');
  t.is(response.status, 401);
  t.is(response.body.message, 'Duplicate API key found');
});

test.serial('realm goes into WWW-Authenticate', async (t) => {
  const response = await f.call('/realm');
  t.is(response.headers.get('www-authenticate'), 'Key realm="test-realm"');
});

test.serial('a key in the header or the query string authenticates and the consumer headers reach the upstream', async (t) => {
  for (const init of [{ path: '/plain', headers: { apikey: 'k-alice' } as Record<string, string> }, { path: '/plain?apikey=k-alice', headers: {} as Record<string, string> }]) {
    const response = await f.call(init.path, { headers: init.headers });
    t.is(response.status, 200);
    const seen = f.upstream.last()!.headers;
    t.is(seen['x-consumer-id'], aliceId);
    t.is(seen['x-consumer-username'], 'alice');
    t.is(seen['x-consumer-custom-id'], 'c-1');
    t.regex(String(seen['x-credential-identifier']), /^[0-9a-f-]{36}$/);
    t.is(seen['x-anonymous-consumer'], undefined);
  }
});

test.serial('without hide_credentials the key reaches the upstream; with it, it does not', async (t) => {
  // strip_path defaults to true: /plain is stripped, the query string is kept
  await f.call('/plain?apikey=k-alice&x=1');
  t.is(f.upstream.last()!.url, '/?apikey=k-alice&x=1');
  await f.call('/hidden?apikey=k-alice&x=1');
  t.is(f.upstream.last()!.url, '/?x=1');
  await f.call('/hidden', { headers: { apikey: 'k-alice' } });
  t.is(f.upstream.last()!.headers.apikey, undefined);
});

test.serial('anonymous: a failed authentication continues as the anonymous consumer', async (t) => {
  const response = await f.call('/anonymous', { headers: { apikey: 'wrong' } });
  t.is(response.status, 200);
  const seen = f.upstream.last()!.headers;
  t.is(seen['x-anonymous-consumer'], 'true');
  t.is(seen['x-consumer-username'], 'guest');
  t.is(seen['x-credential-identifier'], undefined);
});

test.serial('run_on_preflight=false lets OPTIONS through without a key', async (t) => {
  t.is((await f.call('/preflight', { method: 'OPTIONS' })).status, 200);
  t.is((await f.call('/preflight')).status, 401);
  t.is((await f.call('/plain', { method: 'OPTIONS' })).status, 401);
});

// Kong deletes rows past their ttl on a timer, every ttl_cleanup_interval (300 s:
// kong/db/strategies/postgres/connector.lua:310-380, :970); until then the row is hidden from
// reads but its key stays taken.
const TTL_CLEANUP_INTERVAL_MS = 300_000;

test.serial('an expired key is taken until the ttl cleanup deletes it: POST 409, DELETE 204 frees nothing; after the interval POST creates it (postgres/connector.lua:310-380, dao/init.lua:904-919)', async (t) => {
  t.is((await f.admin('/consumers/alice/key-auth', { method: 'POST', json: { key: 'k-expiring', ttl: 1 } })).status, 201);
  await f.gateway.clock.advance(2_000);
  t.is((await f.admin('/key-auths/k-expiring')).status, 404);
  const taken = await f.admin('/consumers/guest/key-auth', { method: 'POST', json: { key: 'k-expiring' } });
  t.is(taken.status, 409);
  t.is(taken.body.name, 'unique constraint violation');
  // delete_by_key selects first, ttl-filtered: nothing found, nothing deleted, 204
  t.is((await f.admin('/key-auths/k-expiring', { method: 'DELETE' })).status, 204);
  t.is((await f.admin('/consumers/guest/key-auth', { method: 'POST', json: { key: 'k-expiring' } })).status, 409);
  await f.gateway.clock.advance(TTL_CLEANUP_INTERVAL_MS);
  const created = await f.admin('/consumers/guest/key-auth', { method: 'POST', json: { key: 'k-expiring' } });
  t.is(created.status, 201);
  t.is(created.body.ttl, null);
});

test.serial('PUT of an expired key takes it over at once, id and all, under the URL\'s consumer: upsert_by_key is INSERT … ON CONFLICT (key) DO UPDATE (postgres/init.lua:1476-1487)', async (t) => {
  const created = await f.admin('/consumers/alice/key-auth', { method: 'POST', json: { key: 'k-revived', ttl: 1 } });
  await f.gateway.clock.advance(2_000);
  t.is((await f.call('/plain', { headers: { apikey: 'k-revived' } })).status, 401);
  const revived = await f.admin('/consumers/guest/key-auth/k-revived', { method: 'PUT', json: {} });
  t.is(revived.status, 200);
  t.is(revived.body.id, created.body.id);
  t.is(revived.body.ttl, null);
  t.is((await f.admin('/consumers/guest')).body.id, revived.body.consumer.id);
  t.is((await f.call('/plain', { headers: { apikey: 'k-revived' } })).status, 200);
  t.is(f.upstream.last()!.headers['x-consumer-username'], 'guest');
});

test.serial("a nested PUT of another consumer's live key moves it to the URL's consumer: put_entity_endpoint sets the foreign key and upserts, no owner check (kong/api/endpoints.lua:521-547)", async (t) => {
  const created = await f.admin('/consumers/alice/key-auth', { method: 'POST', json: { key: 'k-moved' } });
  t.is((await f.call('/plain', { headers: { apikey: 'k-moved' } })).status, 200);
  t.is(f.upstream.last()!.headers['x-consumer-username'], 'alice');
  const moved = await f.admin('/consumers/guest/key-auth/k-moved', { method: 'PUT', json: { tags: ['moved'] } });
  t.is(moved.status, 200);
  t.is(moved.body.id, created.body.id);
  t.is(moved.body.consumer.id, (await f.admin('/consumers/guest')).body.id);
  t.is((await f.admin('/consumers/alice/key-auth/k-moved')).status, 404);
  t.is((await f.call('/plain', { headers: { apikey: 'k-moved' } })).status, 200);
  t.is(f.upstream.last()!.headers['x-consumer-username'], 'guest');
  // by id too
  const back = await f.admin(`/consumers/alice/key-auth/${created.body.id}`, { method: 'PUT', json: { key: 'k-moved' } });
  t.is(back.status, 200);
  t.is(back.body.consumer.id, aliceId);
});

test.serial("a ttl counts from created_at: a given one, or the one a PUT stamps now (postgres/init.lua:351-377 get_ttl_value, schema/init.lua:1897-1917)", async (t) => {
  t.is((await f.admin('/consumers/alice/key-auth', { method: 'POST', json: { key: 'k-put-ttl' } })).status, 201);
  await f.gateway.clock.advance(5_000);
  // a form, as `curl -d ttl=3` sends it: the PUT stamps created_at now and the key lives 3 s more
  const put = await f.admin('/consumers/alice/key-auth/k-put-ttl', { method: 'PUT', body: new URLSearchParams({ ttl: '3' }) });
  t.is(put.status, 200);
  t.is(put.body.created_at, Math.floor(f.gateway.clock.now() / 1000));
  t.is(put.body.ttl, 3);
  t.is((await f.call('/plain', { headers: { apikey: 'k-put-ttl' } })).status, 200);
  const now = Math.floor(f.gateway.clock.now() / 1000);
  const backdated = await f.admin('/consumers/alice/key-auth', { method: 'POST', json: { key: 'k-backdated', created_at: now - 5, ttl: 10 } });
  t.deepEqual([backdated.body.created_at, backdated.body.ttl], [now - 5, 5]);
});

test('a ttl that is no integer between 0 and 100000000 is an invalid option, checked before the entity (kong/db/dao/init.lua:196-201, errors.lua:443-476)', async (t) => {
  const message = 'must be an integer between 0 and 100000000';
  for (const ttl of [1.5, -1, 100000001, '10', true]) {
    const refused = await f.admin('/consumers/alice/key-auth', { method: 'POST', json: { key: 'k-bad-ttl', ttl } });
    t.deepEqual([refused.status, refused.body], [400, { code: 11, name: 'invalid options', message: `invalid option (ttl: ${message})`, options: { ttl: message } }], JSON.stringify(ttl));
  }
  // the option first: a bad key too is not what Kong reports
  const both = await f.admin('/consumers/alice/key-auth', { method: 'POST', json: { key: 5, ttl: -1 } });
  t.is(both.body.name, 'invalid options');
  // a form's "10" is a number (arguments.ts infers it, as Kong's arguments.lua does)
  t.is((await f.admin('/consumers/alice/key-auth', { method: 'POST', body: new URLSearchParams({ key: 'k-form-ttl', ttl: '10' }) })).status, 201);
});

test.serial('a PATCH without a ttl keeps the expiry; with one it counts from now (postgres/init.lua:443-445, :351-377)', async (t) => {
  t.is((await f.admin('/consumers/alice/key-auth', { method: 'POST', json: { key: 'k-patched', ttl: 100 } })).status, 201);
  await f.gateway.clock.advance(10_000);
  const tagged = await f.admin('/key-auths/k-patched', { method: 'PATCH', json: { tags: ['x'] } });
  t.deepEqual([tagged.body.tags, tagged.body.ttl], [['x'], 90]);
  t.is((await f.admin('/key-auths/k-patched', { method: 'PATCH', json: { ttl: 50 } })).body.ttl, 50);
  await f.gateway.clock.advance(50_000);
  t.is((await f.admin('/key-auths/k-patched')).status, 404);
});
