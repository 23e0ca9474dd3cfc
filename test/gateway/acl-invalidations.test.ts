import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request, type JsonResponse } from '../helpers/backend.ts';
import { startEchoUpstream, startTestGateway, writeConfig, type EchoUpstream, type TestGateway } from '../helpers/gateway.ts';
import { httpGet } from '../helpers/http-request.ts';
import { PLUGIN_FIXTURES_DIR } from '../data-plane/plugins/kit.ts';

// ACL changes through the Admin API take effect on the proxy: Kong 3.9.3's
// spec/03-plugins/18-acl/03-invalidations_spec.lua, and the "Real-world usage" cases of
// 02-access_spec.lua (:1238, :1340), which write through the Admin API. Not here: the spec's
// GET /cache/{key} checks (:120, :161, :210) and helpers.wait_for_invalidation. The data plane
// keeps no groups cache (kong.plugins.acl.groups reads the snapshot it runs) and the gateway has
// no /cache endpoint; a write answers once the node runs it, so the next request sees it.
// Each case builds its own consumers and routes (Kong's spec restarts Kong with a fresh database).
type Call = (path: string, init?: RequestInit & { json?: unknown }) => Promise<JsonResponse>;
type Proxy = (host: string, path: string) => Promise<number>;
let gateway: TestGateway;
let upstream: EchoUpstream;
let admin: Call;
let proxy: Proxy;
const INVALIDATIONS = '03-invalidations_spec.lua';
const ACCESS = '02-access_spec.lua';

test.before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'acl-invalidations-'));
  upstream = await startEchoUpstream();
  gateway = await startTestGateway({
    configFile: writeConfig(dir, '_format_version: "3.0"\n'),
    dir,
    pluginsDir: PLUGIN_FIXTURES_DIR,
    plugins: ['ctx-checker'],
  });
  admin = async (path, init = {}) => {
    const res = await request(`${gateway.adminUrl}${path}`, init);
    if (res.status >= 400 && init.method !== undefined && init.method !== 'GET') throw new Error(`${init.method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res;
  };
  proxy = async (host, path) => (await httpGet(`${gateway.proxyUrl}${path}`, { headers: { host } })).status;
});
test.after.always(async () => {
  await gateway?.dispose();
  await upstream?.close();
  if (gateway) rmSync(gateway.dir, { recursive: true, force: true });
});

/**
 * 03-invalidations_spec.lua:11-98, named apart by `tag`: consumer1 (admin, pro), consumer2
 * (admin), routes acl1 (allow admin) and acl2 (allow ya), each with key-auth.
 */
async function setup(admin: Call, upstreamUrl: string, tag: string) {
  const post = (path: string, json: unknown) => admin(path, { method: 'POST', json });
  const consumer = (await post('/consumers', { username: `consumer1-${tag}` })).body as { id: string };
  await post(`/consumers/consumer1-${tag}/key-auth`, { key: `apikey123-${tag}` });
  const acl = (await post(`/consumers/consumer1-${tag}/acls`, { group: 'admin' })).body as { id: string };
  await post(`/consumers/consumer1-${tag}/acls`, { group: 'pro' });
  await post('/consumers', { username: `consumer2-${tag}` });
  await post(`/consumers/consumer2-${tag}/key-auth`, { key: `apikey124-${tag}` });
  await post(`/consumers/consumer2-${tag}/acls`, { group: 'admin' });
  await post('/services', { name: `svc-${tag}`, url: upstreamUrl });
  for (const [route, allow] of [['acl1', 'admin'], ['acl2', 'ya']] as const) {
    const created = (await post(`/services/svc-${tag}/routes`, { name: `${route}-${tag}`, hosts: [`${route}-${tag}.test`] })).body as { id: string };
    await post(`/routes/${created.id}/plugins`, { name: 'key-auth' });
    await post(`/routes/${created.id}/plugins`, { name: 'acl', config: { allow: [allow] } });
  }
  return { consumer, acl, host: (route: string) => `${route}-${tag}.test`, key: `apikey123-${tag}` };
}

test.serial(`invalidates when an ACL entity is deleted (${INVALIDATIONS}:108)`, async (t) => {
  const s = await setup(admin, upstream.url, 'deleted');
  t.is(await proxy(s.host('acl1'), `/status/200?apikey=${s.key}`), 200);
  t.is((await admin(`/consumers/consumer1-deleted/acls/${s.acl.id}`, { method: 'DELETE' })).status, 204);
  t.is(await proxy(s.host('acl1'), `/status/200?apikey=${s.key}`), 403);
});

test.serial(`invalidates when an ACL entity is updated (${INVALIDATIONS}:142)`, async (t) => {
  const s = await setup(admin, upstream.url, 'updated');
  t.is(await proxy(s.host('acl1'), `/status/200?apikey=${s.key}&prova=scemo`), 200);
  t.is(await proxy(s.host('acl2'), `/status/200?apikey=${s.key}`), 403);
  t.is((await admin(`/consumers/consumer1-updated/acls/${s.acl.id}`, { method: 'PATCH', json: { group: 'ya' } })).status, 200);
  t.is(await proxy(s.host('acl1'), `/status/200?apikey=${s.key}`), 403);
  t.is(await proxy(s.host('acl2'), `/status/200?apikey=${s.key}`), 200);
});

test.serial(`invalidates when the Consumer entity is deleted: its key is gone, 401 (${INVALIDATIONS}:199)`, async (t) => {
  const s = await setup(admin, upstream.url, 'consumer');
  t.is(await proxy(s.host('acl1'), `/status/200?apikey=${s.key}`), 200);
  t.is((await admin('/consumers/consumer1-consumer', { method: 'DELETE' })).status, 204);
  t.is((await admin(`/acls/${s.acl.id}`)).status, 404, 'its ACLs went with it');
  t.is(await proxy(s.host('acl1'), `/status/200?apikey=${s.key}`), 401);
});

test.serial(`does not fail when multiple rules are set fast (${ACCESS}:1238)`, async (t) => {
  await admin('/consumers/', { method: 'POST', json: { username: 'acl_consumer' } });
  await admin('/consumers/acl_consumer/key-auth', { method: 'POST', json: { key: 'secret123' } });
  for (const i of [1, 2, 3]) {
    const service = (await admin('/services', { method: 'POST', json: { name: `fast-${i}-${randomUUID()}`, url: upstream.url } })).body as { id: string };
    const route = (await admin('/routes', { method: 'POST', json: { hosts: [`acl_test${i}.test`], protocols: ['http', 'https'], service: { id: service.id } } })).body as { id: string };
    await admin('/plugins', { method: 'POST', json: { name: 'acl', config: { allow: [`admin${i}`] }, route: { id: route.id } } });
    await admin('/plugins', { method: 'POST', json: { name: 'key-auth', route: { id: route.id } } });
    await admin('/consumers/acl_consumer/acls', { method: 'POST', json: { group: `admin${i}` } });
    t.is(await proxy(`acl_test${i}.test`, '/status/200?apikey=secret123'), 200, `rule ${i}`);
  }
});

test.serial(`does not fail when multiple rules are set fast with authenticated groups (${ACCESS}:1340)`, async (t) => {
  for (const i of [1, 2, 3]) {
    const service = (await admin('/services', { method: 'POST', json: { name: `fast-b-${i}`, url: upstream.url } })).body as { id: string };
    const route = (await admin('/routes/', { method: 'POST', json: { hosts: [`acl_test${i}b.test`], protocols: ['http', 'https'], service: { id: service.id } } })).body as { id: string };
    await admin('/plugins', { method: 'POST', json: { name: 'acl', config: { allow: [`admin${i}`] }, route: { id: route.id } } });
    await admin('/plugins', {
      method: 'POST',
      json: { name: 'ctx-checker', route: { id: route.id }, config: { ctx_kind: 'kong.ctx.shared', ctx_set_field: 'authenticated_groups', ctx_set_array: [`admin${i}`] } },
    });
    t.is(await proxy(`acl_test${i}b.test`, '/status/200'), 200, `rule ${i}`);
  }
});
