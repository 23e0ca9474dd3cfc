import test from 'ava';
import { startTestNode, type TestNode } from '../../helpers/data-plane.ts';
import { httpGet, type HttpResponse } from '../../helpers/http-request.ts';
import type { SnapshotInput } from '../../helpers/snapshot-builder.ts';
import { startUpstream, type Upstream } from '../../helpers/upstream.ts';
import { BUNDLED_PLUGINS, PLUGIN_FIXTURES_DIR, logged, mockUpstream, plugin } from './kit.ts';

// Kong 3.9.3's spec/03-plugins/18-acl/02-access_spec.lua, transcribed, on a data-plane node
// (SPEC:<line> below). The spec's ctx-checker plugin is test/data-plane/plugins/fixtures/ctx-checker.
// Both of the spec's setups (the main one, :12, and "anonymous", :1524) share one snapshot: the
// second's consumers "anonymous" and "anonymous_with_group" are anonymous-b and
// anonymous-with-group here. Not here:
// - "Real-world usage" (:1238, :1340): it writes through the Admin API; in
//   test/gateway/acl-invalidations.test.ts.
// - "cache warmup acls group" (:1460): it reads Kong's kong_db_cache shared dict from a
//   pre-function plugin after a restart with db_cache_warmup_entities; the data plane runs no
//   pre-function and keeps no entity cache (it reads the snapshot it runs).

const SPEC = 'spec/03-plugins/18-acl/02-access_spec.lua';

let upstream: Upstream;
let node: TestNode;

const ANONYMOUS_ID = '00000000-0000-4000-8000-0000000a0001';
const ANONYMOUS_B_ID = '00000000-0000-4000-8000-0000000a0002';
const ANONYMOUS_WITH_GROUP_ID = '00000000-0000-4000-8000-0000000a0003';

const ctxChecker = (route: string, config: Record<string, unknown>) => ({ name: 'ctx-checker', route, config });
const sharedGroups = (route: string, groups: string[]) =>
  ctxChecker(route, { ctx_kind: 'kong.ctx.shared', ctx_set_field: 'authenticated_groups', ctx_set_array: groups });

function snapshot(): SnapshotInput {
  const acl = (route: string, config: Record<string, unknown>) => plugin('acl', { route }, config);
  const keyAuth = (route: string, config: Record<string, unknown> = {}) => plugin('key-auth', { route }, config);
  const hosts = [
    'acl1', 'acl1b', 'acl2', 'acl2b', 'acl2c', 'acl3', 'acl3b', 'acl3c', 'acl3d', 'acl4', 'acl4b', 'acl4c', 'acl5', 'acl5b', 'acl5c',
    'acl6', 'acl6b', 'acl6c', 'acl7', 'acl7b', 'acl8', 'acl8b', 'acl9', 'acl9b', 'acl10', 'acl10b', 'acl11', 'acl12', 'acl13',
    'acl15', 'acl16', 'acl17',
    'allow-everyone', 'allow-none', 'deny-everyone', 'deny-none', 'allow-everyone-anonymous', 'allow-everyone-anonymous-with-group',
    'allow-none-anonymous', 'allow-none-anonymous-with-group', 'deny-everyone-anonymous', 'deny-everyone-anonymous-with-group',
    'deny-none-anonymous', 'deny-none-anonymous-with-group',
    'groups-probe', 'ngx-ctx-groups', 'string-groups',
  ];
  return {
    services: [{ name: 'mock', url: upstream.url }],
    routes: hosts.map((host) => ({ name: host, service: 'mock', hosts: [`${host}.test`] })),
    consumers: [
      { username: 'consumer1' },
      { username: 'consumer2' },
      { username: 'consumer3' },
      { username: 'consumer4' },
      { username: 'consumer5' },
      { username: 'member' },
      { id: ANONYMOUS_ID, username: 'anonymous' },
      { id: ANONYMOUS_B_ID, username: 'anonymous-b' },
      { id: ANONYMOUS_WITH_GROUP_ID, username: 'anonymous-with-group' },
    ],
    keyauth_credentials: [
      { consumer: 'consumer1', key: 'apikey123' },
      { consumer: 'consumer2', key: 'apikey124' },
      { consumer: 'consumer3', key: 'apikey125' },
      { consumer: 'consumer4', key: 'apikey126' },
      { consumer: 'consumer5', key: 'apikey127' },
      { consumer: 'member', key: 'member-key' },
    ],
    acls: [
      { consumer: 'consumer2', group: 'admin' },
      { consumer: 'consumer3', group: 'pro' },
      { consumer: 'consumer3', group: 'hello' },
      { consumer: 'consumer4', group: 'free' },
      { consumer: 'consumer4', group: 'hello' },
      { consumer: 'consumer5', group: 'acl_group1' },
      { consumer: 'anonymous', group: 'anonymous' },
      { consumer: 'anonymous-with-group', group: 'everyone' },
      { consumer: 'member', group: 'animal-store' },
      { consumer: 'member', group: 'gold' },
    ],
    plugins: [
      // SPEC:12-845
      acl('acl1', { allow: ['admin'] }),
      acl('acl1b', { allow: ['admin'] }),
      ctxChecker('acl1b', { ctx_set_field: 'authenticated_credential', ctx_set_value: 'dummy-credential' }),
      acl('acl2', { allow: ['admin'] }),
      keyAuth('acl2'),
      acl('acl2b', { allow: ['admin'] }),
      sharedGroups('acl2b', ['admin']),
      acl('acl2c', { allow: ['admin'] }),
      sharedGroups('acl2c', []),
      acl('acl3', { deny: ['admin'] }),
      keyAuth('acl3'),
      acl('acl3b', { deny: ['admin'] }),
      sharedGroups('acl3b', []),
      acl('acl3c', { deny: ['admin'] }),
      sharedGroups('acl3c', ['admin']),
      acl('acl3d', { deny: ['none'] }),
      acl('acl4', { allow: ['admin', 'pro'] }),
      keyAuth('acl4'),
      acl('acl4b', { allow: ['admin', 'pro'] }),
      sharedGroups('acl4b', ['pro', 'hello']),
      acl('acl4c', { allow: ['admin', 'pro'] }),
      sharedGroups('acl4c', ['free', 'hello']),
      acl('acl5', { deny: ['admin', 'pro'] }),
      keyAuth('acl5'),
      acl('acl5b', { deny: ['admin', 'pro'] }),
      sharedGroups('acl5b', ['pro', 'hello']),
      acl('acl5c', { deny: ['admin', 'pro'] }),
      sharedGroups('acl5c', ['free', 'hello']),
      acl('acl6', { deny: ['admin', 'pro', 'hello'] }),
      keyAuth('acl6'),
      acl('acl6b', { deny: ['admin', 'pro', 'hello'] }),
      sharedGroups('acl6b', ['free', 'hello']),
      acl('acl6c', { deny: ['admin', 'pro', 'hello'] }),
      sharedGroups('acl6c', ['pro', 'hello']),
      acl('acl7', { allow: ['admin', 'pro', 'hello'] }),
      keyAuth('acl7'),
      acl('acl7b', { allow: ['admin', 'pro', 'hello'] }),
      sharedGroups('acl7b', ['free', 'hello']),
      acl('acl8', { allow: ['anonymous'] }),
      keyAuth('acl8', { anonymous: ANONYMOUS_ID }),
      acl('acl8b', { allow: ['anonymous'] }),
      keyAuth('acl8b', { anonymous: ANONYMOUS_ID }),
      sharedGroups('acl8b', ['anonymous']),
      acl('acl9', { allow: ['admin'], hide_groups_header: true }),
      keyAuth('acl9'),
      acl('acl9b', { allow: ['admin'], hide_groups_header: true }),
      sharedGroups('acl9b', ['admin']),
      acl('acl10', { allow: ['admin'], hide_groups_header: false }),
      keyAuth('acl10'),
      acl('acl10b', { allow: ['admin'], hide_groups_header: false }),
      sharedGroups('acl10b', ['admin']),
      acl('acl11', { allow: ['admin', 'anonymous'] }),
      keyAuth('acl11', { anonymous: ANONYMOUS_ID }),
      sharedGroups('acl11', ['admin']),
      acl('acl12', { allow: ['anonymous'] }),
      keyAuth('acl12', { anonymous: ANONYMOUS_ID }),
      sharedGroups('acl12', ['anonymous']),
      acl('acl13', { allow: ['anonymous'] }),
      keyAuth('acl13', { anonymous: ANONYMOUS_ID }),
      sharedGroups('acl13', ['admin']),
      acl('acl15', { allow: ['auth_group1'], always_use_authenticated_groups: true }),
      keyAuth('acl15'),
      sharedGroups('acl15', ['auth_group1']),
      acl('acl16', { allow: ['auth_group1'], always_use_authenticated_groups: true }),
      keyAuth('acl16'),
      sharedGroups('acl16', ['auth_group2']),
      acl('acl17', { allow: ['acl_group1'], always_use_authenticated_groups: true }),
      keyAuth('acl17'),
      // SPEC:1524-1762 (the spec's deny-everyone and deny-none use allow lists, kept as written)
      acl('allow-everyone', { allow: ['everyone'] }),
      acl('allow-none', { allow: ['none'] }),
      acl('deny-everyone', { allow: ['everyone'] }),
      acl('deny-none', { allow: ['none'] }),
      acl('allow-everyone-anonymous', { allow: ['everyone'] }),
      keyAuth('allow-everyone-anonymous', { anonymous: ANONYMOUS_B_ID }),
      acl('allow-everyone-anonymous-with-group', { allow: ['everyone'] }),
      keyAuth('allow-everyone-anonymous-with-group', { anonymous: ANONYMOUS_WITH_GROUP_ID }),
      acl('allow-none-anonymous', { allow: ['none'] }),
      keyAuth('allow-none-anonymous', { anonymous: ANONYMOUS_B_ID }),
      acl('allow-none-anonymous-with-group', { allow: ['none'] }),
      keyAuth('allow-none-anonymous-with-group', { anonymous: ANONYMOUS_WITH_GROUP_ID }),
      acl('deny-everyone-anonymous', { deny: ['everyone'] }),
      keyAuth('deny-everyone-anonymous', { anonymous: ANONYMOUS_B_ID }),
      acl('deny-everyone-anonymous-with-group', { deny: ['everyone'] }),
      keyAuth('deny-everyone-anonymous-with-group', { anonymous: ANONYMOUS_WITH_GROUP_ID }),
      acl('deny-none-anonymous', { deny: ['none'] }),
      keyAuth('deny-none-anonymous', { anonymous: ANONYMOUS_B_ID }),
      acl('deny-none-anonymous-with-group', { deny: ['none'] }),
      keyAuth('deny-none-anonymous-with-group', { anonymous: ANONYMOUS_WITH_GROUP_ID }),
      // groups set in ngx.ctx (Kong's older place), or not as a table
      acl('ngx-ctx-groups', { allow: ['admin'] }),
      ctxChecker('ngx-ctx-groups', { ctx_set_field: 'authenticated_groups', ctx_set_array: ['admin'] }),
      acl('string-groups', { allow: ['admin'] }),
      ctxChecker('string-groups', { ctx_set_field: 'authenticated_groups', ctx_set_value: 'admin' }),
      // another plugin reading groups through kong.plugins.acl.groups, no acl on the route
      keyAuth('groups-probe', { anonymous: ANONYMOUS_B_ID }),
      { name: 'acl-groups-probe', route: 'groups-probe', config: {} },
    ],
  };
}

test.before(async () => {
  upstream = await startUpstream(mockUpstream);
  node = await startTestNode({ pluginsDir: PLUGIN_FIXTURES_DIR, plugins: [...BUNDLED_PLUGINS, 'ctx-checker', 'acl-groups-probe'], snapshot: snapshot() });
});

test.after.always(async () => {
  await node?.dispose();
  await upstream?.close();
});

function get(host: string, path: string): Promise<HttpResponse> {
  return httpGet(node.url(path), { headers: { host: `${host}.test` } });
}

/** The groups headers the upstream received (mockUpstream describes the request). */
async function upstreamGroups(host: string, path: string): Promise<{ consumer?: string; authenticated?: string }> {
  const res = await get(host, path);
  if (res.status !== 200) throw new Error(`${host}${path}: ${res.status} ${JSON.stringify(res.json)}`);
  const headers = (res.json as { headers: Record<string, string> }).headers;
  return { consumer: headers['x-consumer-groups'], authenticated: headers['x-authenticated-groups'] };
}

async function refused(host: string, path: string): Promise<[number, unknown]> {
  const res = await get(host, path);
  return [res.status, (res.json as { message?: string } | undefined)?.message];
}

const FORBIDDEN: [number, string] = [403, 'You cannot consume this service'];
const UNAUTHORIZED: [number, string] = [401, 'Unauthorized'];

// --- Mapping to Consumer or Authenticated Groups ---------------------------------------------

test(`works with a consumer with credentials: X-Consumer-Groups (${SPEC}:860)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl2', '/request?apikey=apikey124'), { consumer: 'admin', authenticated: undefined });
});

test(`works with authenticated groups: X-Authenticated-Groups (${SPEC}:872)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl2b', '/request'), { consumer: undefined, authenticated: 'admin' });
});

test(`works with a consumer without credentials (anonymous) (${SPEC}:884)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl8', '/request'), { consumer: 'anonymous', authenticated: undefined });
});

test(`works with authenticated groups without credentials (${SPEC}:896)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl8b', '/request'), { consumer: undefined, authenticated: 'anonymous' });
});

// --- Simple lists --------------------------------------------------------------------------------

test(`fails with 401 when an authentication plugin is missing (${SPEC}:911)`, async (t) => {
  t.deepEqual(await refused('acl1', '/status/200'), UNAUTHORIZED);
});

test(`fails with 403 when an authentication plugin is missing but a credential is set (${SPEC}:923)`, async (t) => {
  t.deepEqual(await refused('acl1b', '/status/200'), FORBIDDEN);
});

test(`fails when not allowed (${SPEC}:935)`, async (t) => {
  t.deepEqual(await refused('acl2', '/status/200?apikey=apikey123'), FORBIDDEN);
});

test(`fails when not allowed with (empty) authenticated groups (${SPEC}:947)`, async (t) => {
  t.deepEqual(await refused('acl2c', '/status/200'), FORBIDDEN);
});

test(`works when allowed, with a consumer and with authenticated groups (${SPEC}:959, :970)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl2', '/request?apikey=apikey124'), { consumer: 'admin', authenticated: undefined });
  t.deepEqual(await upstreamGroups('acl2b', '/request'), { consumer: undefined, authenticated: 'admin' });
});

test(`hide_groups_header true sends neither header (${SPEC}:981, :992)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl9', '/request?apikey=apikey124'), { consumer: undefined, authenticated: undefined });
  t.deepEqual(await upstreamGroups('acl9b', '/request'), { consumer: undefined, authenticated: undefined });
});

test(`hide_groups_header false sends the groups (${SPEC}:1003, :1014)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl10', '/request?apikey=apikey124'), { consumer: 'admin', authenticated: undefined });
  t.deepEqual(await upstreamGroups('acl10b', '/request'), { consumer: undefined, authenticated: 'admin' });
});

test(`works when not denied (${SPEC}:1025)`, async (t) => {
  t.is((await get('acl3', '/request?apikey=apikey123')).status, 200);
});

test(`works when not denied with (empty) authenticated groups: no groups header (${SPEC}:1034)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl3b', '/request'), { consumer: undefined, authenticated: undefined });
});

test(`fails when denied (${SPEC}:1043)`, async (t) => {
  t.deepEqual(await refused('acl3', '/request?apikey=apikey124'), FORBIDDEN);
});

test(`fails when denied with authenticated groups (${SPEC}:1055)`, async (t) => {
  t.deepEqual(await refused('acl3c', '/request'), FORBIDDEN);
});

test(`fails with 401 on a deny list with no one authenticated and no authenticated groups (${SPEC}:1067)`, async (t) => {
  t.deepEqual(await refused('acl3d', '/request'), UNAUTHORIZED);
});

// --- Multi lists ---------------------------------------------------------------------------------

test(`works when allowed: every group of the consumer in X-Consumer-Groups (${SPEC}:1081)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl4', '/request?apikey=apikey125'), { consumer: 'pro, hello', authenticated: undefined });
});

test(`works when allowed with authenticated groups (${SPEC}:1092)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl4b', '/request'), { consumer: undefined, authenticated: 'pro, hello' });
});

test(`fails when not allowed, with a consumer and with authenticated groups (${SPEC}:1103, :1115)`, async (t) => {
  t.deepEqual(await refused('acl4', '/request?apikey=apikey126'), FORBIDDEN);
  t.deepEqual(await refused('acl4c', '/request'), FORBIDDEN);
});

test(`fails when denied, with a consumer and with authenticated groups (${SPEC}:1127, :1139)`, async (t) => {
  t.deepEqual(await refused('acl5', '/request?apikey=apikey125'), FORBIDDEN);
  t.deepEqual(await refused('acl5b', '/request'), FORBIDDEN);
});

test(`works when not denied, with a consumer and with authenticated groups (${SPEC}:1152, :1161)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl5', '/request?apikey=apikey126'), { consumer: 'free, hello', authenticated: undefined });
  t.deepEqual(await upstreamGroups('acl5c', '/request'), { consumer: undefined, authenticated: undefined });
});

test(`does not work when one of the ACLs is denied (${SPEC}:1170, :1182)`, async (t) => {
  t.deepEqual(await refused('acl6', '/request?apikey=apikey126'), FORBIDDEN);
  t.deepEqual(await refused('acl6b', '/request'), FORBIDDEN);
});

test(`works when one of the ACLs is allowed (${SPEC}:1194, :1203)`, async (t) => {
  t.is((await get('acl7', '/request?apikey=apikey126')).status, 200);
  t.deepEqual(await upstreamGroups('acl7b', '/request'), { consumer: undefined, authenticated: 'free, hello' });
});

test(`does not work when at least one of the ACLs is denied (${SPEC}:1212, :1224)`, async (t) => {
  t.deepEqual(await refused('acl6', '/request?apikey=apikey125'), FORBIDDEN);
  t.deepEqual(await refused('acl6c', '/request'), FORBIDDEN);
});

// --- Permits with / Forbids with ---------------------------------------------------------------

test(`permits an authenticated consumer even when authenticated groups are present (${SPEC}:1410)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl11', '/request?apikey=apikey124'), { consumer: 'admin', authenticated: undefined });
});

test(`permits authenticated groups even when the anonymous consumer is present (${SPEC}:1421)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl11', '/request'), { consumer: undefined, authenticated: 'admin' });
});

test(`forbids an authenticated consumer even when authenticated groups are present (${SPEC}:1434)`, async (t) => {
  t.deepEqual(await refused('acl12', '/request?apikey=apikey124'), FORBIDDEN);
});

test(`forbids by authenticated groups even when the anonymous consumer is present (${SPEC}:1446)`, async (t) => {
  t.deepEqual(await refused('acl13', '/request'), FORBIDDEN);
});

// --- always_use_authenticated_groups -------------------------------------------------------------

test(`always_use_authenticated_groups: authenticated groups win over the consumer's (${SPEC}:1479)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl15', '/request?apikey=apikey127'), { consumer: undefined, authenticated: 'auth_group1' });
  t.deepEqual(await refused('acl16', '/request?apikey=apikey127'), FORBIDDEN);
});

test(`always_use_authenticated_groups: without them, the consumer's groups (${SPEC}:1498)`, async (t) => {
  t.deepEqual(await upstreamGroups('acl17', '/request?apikey=apikey127'), { consumer: 'acl_group1', authenticated: undefined });
  t.deepEqual(await refused('acl17', '/request?apikey=apikey126'), FORBIDDEN);
});

// --- anonymous ------------------------------------------------------------------------------------

test(`without authentication: 401 on allow and deny lists alike (${SPEC}:1781)`, async (t) => {
  for (const host of ['allow-everyone', 'allow-none', 'deny-everyone', 'deny-none']) {
    t.deepEqual(await refused(host, '/request'), UNAUTHORIZED, host);
  }
});

test(`an anonymous consumer without groups: 401 with allow lists (${SPEC}:1821)`, async (t) => {
  for (const host of ['allow-everyone-anonymous', 'allow-none-anonymous']) {
    t.deepEqual(await refused(host, '/request'), UNAUTHORIZED, host);
  }
});

test(`an anonymous consumer without groups: 200 with deny lists, X-Consumer-Groups empty (${SPEC}:1841)`, async (t) => {
  for (const host of ['deny-everyone-anonymous', 'deny-none-anonymous']) {
    t.deepEqual(await upstreamGroups(host, '/request'), { consumer: '', authenticated: undefined }, host);
  }
});

test(`an anonymous consumer with a group: 200 when allowed or not denied (${SPEC}:1861)`, async (t) => {
  for (const host of ['allow-everyone-anonymous-with-group', 'deny-none-anonymous-with-group']) {
    t.deepEqual(await upstreamGroups(host, '/request'), { consumer: 'everyone', authenticated: undefined }, host);
  }
});

test(`an anonymous consumer with a group: 403 when not allowed or denied (${SPEC}:1881)`, async (t) => {
  for (const host of ['allow-none-anonymous-with-group', 'deny-everyone-anonymous-with-group']) {
    t.deepEqual(await refused(host, '/request'), FORBIDDEN, host);
  }
});

// --- kong.plugins.acl.groups from another plugin ---------------------------------------------

test('another plugin reads the consumer\'s groups through kong.plugins.acl.groups, with no acl on the route', async (t) => {
  const member = await get('groups-probe', '/request?apikey=member-key');
  t.is(member.status, 200);
  t.like(member.json, { groups: ['animal-store', 'gold'], in_allowed: true });
  const other = await get('groups-probe', '/request?apikey=apikey126');
  t.like(other.json, { groups: ['free', 'hello'], in_allowed: false });
  const noGroups = await get('groups-probe', '/request?apikey=apikey123');
  // (cjson writes an empty Lua table as {})
  t.like(noGroups.json, { groups: {}, in_allowed: false });
  const anonymous = await get('groups-probe', '/request');
  t.like(anonymous.json, { consumer_id: ANONYMOUS_B_ID, groups: {}, in_allowed: false });
});

test('authenticated groups in ngx.ctx count too; a string there is ignored with a warning (kong/plugins/acl/groups.lua:158-170)', async (t) => {
  t.deepEqual(await upstreamGroups('ngx-ctx-groups', '/request'), { consumer: undefined, authenticated: 'admin' });
  t.deepEqual(await refused('string-groups', '/request'), UNAUTHORIZED);
  await logged(node, /invalid authenticated_groups, a table was expected/);
  t.pass();
});
