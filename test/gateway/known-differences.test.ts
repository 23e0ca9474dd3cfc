import { createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request, type JsonResponse } from '../helpers/backend.ts';
import { startTestNode } from '../helpers/data-plane.ts';
import { startTestGateway, writeConfig, type TestGateway } from '../helpers/gateway.ts';
import { makeCertificate } from '../helpers/tls-certificates.ts';
import { readGatewaySettings } from '../../gateway/local/settings.ts';

// docs/known-differences.md: each row asserted here as the difference it is, so
// a row that stops being true fails its test and must leave the table.
type AdminCall = (path: string, init?: RequestInit & { json?: unknown }) => Promise<JsonResponse>;
let gateway: TestGateway;
let dir: string;
let admin: AdminCall;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'differences-'));
  gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir });
  admin = (path, init = {}) => request(`${gateway.adminUrl}${path}`, init);
});
test.after.always(async () => {
  await gateway?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

test('store: SQLite, while GET / reports database "postgres" (decK refuses "off")', async (t) => {
  const root = await admin('/');
  t.is(root.body.configuration.database, 'postgres');
  t.true(existsSync(join(gateway.dir, 'gateway.sqlite')), 'the entities live in a SQLite file');
});

test('GET /: configuration is a subset of Kong\'s; /status has no shared dicts', async (t) => {
  const root = await admin('/');
  t.deepEqual(Object.keys(root.body.configuration).sort(), ['database', 'log_level', 'plugins', 'proxy_listeners', 'role', 'router_flavor']);
  t.deepEqual((await admin('/status')).body.memory.lua_shared_dicts, {});
});

test('KONG_PLUGINS without bundled refuses to start (Kong loads the list)', (t) => {
  for (const value of ['off', 'key-auth,acl']) {
    t.throws(() => readGatewaySettings({ KONG_PLUGINS: value }), { message: `KONG_PLUGINS must include "bundled" (the local gateway always loads them), got ${JSON.stringify(value)}` }, value);
  }
});

test('TLS: the TLS fields of services are refused', async (t) => {
  for (const [field, value] of [['client_certificate', { id: '00000000-0000-4000-8000-000000000000' }], ['tls_verify', true], ['tls_verify_depth', 2], ['ca_certificates', ['00000000-0000-4000-8000-000000000000']]] as const) {
    const refused = await admin('/services', { method: 'POST', json: { name: `tls-${field}`, url: 'https://127.0.0.1:9', [field]: value } });
    t.is(refused.status, 400, field);
    t.regex(refused.body.message, new RegExp(`${field}: not supported by the local gateway`), field);
  }
});

test('lua_ssl_trusted_certificate: none by default (Kong: system), system when asked', async (t) => {
  // kong/templates/kong_defaults.lua: lua_ssl_trusted_certificate = system
  const rendered = readFileSync(join(gateway.node.prefix, 'nginx.conf'), 'utf8');
  t.notRegex(rendered, /lua_ssl_trusted_certificate/);
  const bundle = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'].find((path) => existsSync(path));
  if (!bundle) throw new Error('this check needs the system CA bundle (Debian: ca-certificates)');
  const node = await startTestNode({ luaSslTrustedCertificate: ['system'] });
  t.teardown(() => node.dispose());
  t.regex(readFileSync(join(node.prefix, 'nginx.conf'), 'utf8'), /^\s*lua_ssl_trusted_certificate '.*\/\.ca_combined';$/m);
  t.is(readFileSync(join(node.prefix, '.ca_combined'), 'utf8'), readFileSync(bundle, 'utf8').replace(/\n?$/, '\n'));
});

test('entities it does not run: lists empty, writes and validations 400 naming the type; schemas described where the gateway has them', async (t) => {
  for (const type of ['upstreams', 'vaults', 'keys', 'key-sets', 'basic-auths', 'hmac-auths', 'jwts', 'oauth2']) {
    t.deepEqual((await admin(`/${type}`)).body.data, [], type);
    const write = await admin(`/${type}`, { method: 'POST', json: {} });
    t.is(write.status, 400, type);
    t.regex(write.body.message, new RegExp(`${type}: not supported by the local gateway`));
  }
  const described = ['upstreams', 'targets', 'vaults', 'keys', 'key_sets'];
  const credentials = ['basicauth_credentials', 'hmacauth_credentials', 'jwt_secrets', 'oauth2_credentials'];
  for (const name of [...described, ...credentials]) {
    // Kong validates them; a sync of them would fail here, so `deck gateway validate` says so
    const validated = await admin(`/schemas/${name}/validate`, { method: 'POST', json: {} });
    t.is(validated.status, 400, name);
    t.regex(validated.body.message, new RegExp(`^schema violation \\(${name}: not supported by the local gateway`), name);
  }
  for (const name of described) t.is((await admin(`/schemas/${name}`)).status, 200, name);
  // Kong serves these (constants.lua:137-155 CORE_ENTITIES; kong.lua:216-227 /schemas/vaults/:name); the gateway has no schema for them
  for (const path of [...credentials, 'vaults/env', 'workspaces', 'clustering_data_planes', 'parameters', 'filter_chains']) {
    t.is((await admin(`/schemas/${path}`)).status, 404, path);
  }
});

test('bundled plugins: the eight it implements run; the others are refused by name, as are policy cluster and key_in_body', async (t) => {
  for (const name of ['key-auth', 'rate-limiting', 'request-termination', 'response-transformer', 'correlation-id', 'request-size-limiting', 'prometheus', 'acl']) {
    t.is((await admin(`/schemas/plugins/${name}`)).status, 200, name);
  }
  const cors = await admin('/plugins', { method: 'POST', json: { name: 'cors' } });
  t.is(cors.status, 400);
  t.regex(cors.body.message, /plugin 'cors' is bundled with Kong 3.9 but not implemented by the local gateway/);
  // The data plane runs the redis policy; 'cluster' keeps counters in Kong's database.
  const cluster = await admin('/plugins', { method: 'POST', json: { name: 'rate-limiting', config: { minute: 1, policy: 'cluster' } } });
  t.is(cluster.status, 400);
  t.regex(cluster.body.message, /policy: 'cluster'/);
  const inBody = await admin('/plugins', { method: 'POST', json: { name: 'key-auth', config: { key_in_body: true } } });
  t.is(inBody.status, 400);
  t.regex(inBody.body.message, /key_in_body/);
});

// kong/db/schema/entities/routes.lua (3.9.3) validate_route: with router_flavor
// traditional_compatible a route's paths are checked as the ATC expression they become
// (resty.router's router.validate, Rust's regex crate). The data plane runs them with PCRE; the
// control plane keeps to what both engines read alike.
test('regex paths run on PCRE (Kong: Rust regex); lookaround, backreferences and \\u escapes are refused', async (t) => {
  await admin('/services/regex', { method: 'PUT', json: { url: 'http://127.0.0.1:9' } });
  for (const path of ['~/a(?=b)', '~/a(?!b)', '~/(?<=a)b', '~/(a)\\1', '~/caf\\u00e9']) {
    const refused = await admin('/services/regex/routes', { method: 'POST', json: { paths: [path] } });
    t.is(refused.status, 400, path);
  }
  const named = await admin('/services/regex/routes', { method: 'POST', json: { paths: ['~/pets/(?<id>\\d+)$'] } });
  t.is(named.status, 201);
});

// kong/clustering (hybrid mode): a control plane answers a write when it is stored, and data
// planes apply it when their next sync arrives. Here the Admin API answers once every live node
// runs it (bounded at 1 s), so a request after the response sees the change.
test('an Admin API write answers once the data plane runs it (Kong: when it is stored)', async (t) => {
  await admin('/services/seen', { method: 'PUT', json: { url: 'http://127.0.0.1:9' } });
  const created = await admin('/services/seen/routes', { method: 'POST', json: { name: 'seen', paths: ['/seen-at-once'] } });
  t.is(created.status, 201);
  const nodes = (await admin('/clustering/data-planes')).body.data as Array<{ config_hash: string; sync_status: string; version: string; labels: null }>;
  t.is(nodes.length, 1);
  t.is(nodes[0]!.sync_status, 'normal');
  // Kong's hashes are MD5 in hex (kong/db/schema/entities/clustering_data_planes.lua: len_eq 32)
  t.regex(nodes[0]!.config_hash, /^[0-9a-f]{32}$/);
  t.like(nodes[0], { version: '3.9.3', labels: null }, 'the version the node reported');
  // The route exists on the node already: 502 from the unreachable service, not Kong's 404.
  t.is((await request(`${gateway.proxyUrl}/seen-at-once`)).status, 502);
});

test('certificates: a public key in key is refused', async (t) => {
  const pair = await makeCertificate({ name: 'public-key.test' });
  const publicKey = createPublicKey(pair.key).export({ type: 'spki', format: 'pem' }).toString();
  const res = await admin('/certificates', { method: 'POST', json: { cert: pair.cert, key: publicKey } });
  t.is(res.status, 400);
  t.regex(res.body.fields.key, /^invalid key: /);
});

test('Admin API: a foreign record is checked field by field, without its entity checks', async (t) => {
  // kong/db/schema/init.lua:969 validate(value, false) also runs services' entity checks (a tcp service has no path)
  const nested = await admin('/routes', { method: 'POST', json: { methods: ['GET'], service: { protocol: 'tcp', path: '/x' } } });
  t.deepEqual(nested.body.fields, { service: { id: 'missing primary key' } });
});
