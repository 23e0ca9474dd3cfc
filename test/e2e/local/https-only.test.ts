import ava from 'ava';
import { readFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { join } from 'node:path';
import { Agent } from 'undici';
import { type JsonResponse } from '../../helpers/backend.ts';
import { httpGet } from '../../helpers/http-request.ts';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { shownKey, startTestPortal, type TestPortal } from '../../helpers/portal.ts';
import { startStack, type TestStack } from '../../helpers/stack.ts';
import { freePort } from '../../../packages/node-runtime/free-port.js';

// gateway/kong.yml with DECK_ANIMAL_STORE_HTTPS_ONLY=true (compose's setting): the edge plugin
// refuses plain HTTP 426 in the Error shape before the key is read, with the Upgrade headers of
// Kong's runloop (kong/runloop/handler.lua:1267-1270), and adds Strict-Transport-Security to what
// went over TLS. The runloop's own 426 (route protocols) answers before any plugin of the route
// runs (kong/init.lua:1199-1203; plugins_iterator.lua:357-368 gives header_filter only the global
// plugins then), so its body could not be ours: docs/https.md.

const test = ava.serial;
let stack: TestStack;
let trusting: TestStack;
let plain: TestStack;
let tls: Agent;
// the developer portal behind `stack` (kong.yml's animal-store-portal service)
let portal: TestPortal;

const LISTEN = '127.0.0.1:0, 127.0.0.1:0 http2 ssl';
const HSTS = 'max-age=63072000; includeSubDomains';

test.before(async () => {
  const httpsOnly = { DECK_ANIMAL_STORE_HTTPS_ONLY: 'true' };
  const portalPort = await freePort();
  [stack, trusting, plain] = await Promise.all([
    startStack({ env: { ...httpsOnly, DECK_ANIMAL_STORE_PORTAL_URL: `http://127.0.0.1:${portalPort}` }, node: { proxyListen: LISTEN } }),
    // 127.0.0.1 trusted: as behind a TLS-terminating balancer on loopback, whose X-Forwarded-Proto counts
    startStack({ env: httpsOnly, node: { proxyListen: LISTEN, trustedIps: ['127.0.0.1'] } }),
    startStack({ node: { proxyListen: LISTEN } }),
  ]);
  const ca = readFileSync(join(stack.gateway.node.prefix, 'ssl', 'kong-default-ca.crt'));
  // the default certificate names localhost; the node listens on 127.0.0.1
  tls = new Agent({ connect: { ca, servername: 'localhost' } });
  portal = await startTestPortal({ adminUrl: stack.gateway.adminUrl, apiUrl: `${stack.gateway.node.proxySslUrl}/v1`, signUp: 'open', port: portalPort });
});
test.after.always(async () => {
  await portal?.dispose();
  await tls?.close();
  await Promise.all([stack?.dispose(), trusting?.dispose(), plain?.dispose()]);
});

async function overTls(stack: TestStack, agent: Agent, path: string, key?: string): Promise<JsonResponse> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const response = await fetch(`${stack.gateway.node.proxySslUrl}${path}`, { headers, dispatcher: agent } as RequestInit);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

test('plain HTTP is refused 426 https_required in the Error shape, with Kong\'s Upgrade headers, key or not', async (t) => {
  const key = await stack.provision('plain-http', { minute: 100 });
  for (const [path, sent] of [['/v1/pets', key], ['/v1/pets', 'ask_not-a-key'], ['/v1/pets', undefined], ['/elsewhere', key]] as const) {
    const response = await stack.call(path, sent === undefined ? {} : { key: sent });
    const what = `${path} ${sent === key ? 'with a valid key' : sent ? 'with an invalid key' : 'without a key'}`;
    t.is(response.status, 426, what);
    t.deepEqual(response.body, { code: 'https_required', message: 'The Animal Store API is served over HTTPS only: send the request to https://.', status: 426 }, what);
    t.is(response.headers.get('content-type'), 'application/json; charset=utf-8', what);
    t.is(response.headers.get('upgrade'), 'TLS/1.2, HTTP/1.1', what);
    t.regex(response.headers.get('connection') ?? '', /upgrade/i, what);
    // not counted, not authenticated: no rate-limit headers, no WWW-Authenticate, no HSTS
    t.is(response.headers.get('x-ratelimit-limit'), null, what);
    t.is(response.headers.get('www-authenticate'), null, what);
    t.is(response.headers.get('strict-transport-security'), null, what);
  }
  t.deepEqual(contractProblems('GET', '/pets', await stack.call('/v1/pets', { key })), []);
});

test('a key sent over plain HTTP is not counted: its first request over TLS has the whole minute left', async (t) => {
  const key = await stack.provision('counted-over-tls', { minute: 100 });
  for (let i = 0; i < 3; i++) t.is((await stack.call('/v1/pets', { key })).status, 426);
  const response = await overTls(stack, tls, '/v1/pets', key);
  t.is(response.status, 200);
  t.is(response.headers.get('x-ratelimit-remaining'), '99');
  t.deepEqual(contractProblems('GET', '/pets', response, { checkHeaders: true }), []);
});

test('over TLS every answer carries Strict-Transport-Security: the backend\'s, the gateway\'s 401 and 404', async (t) => {
  const key = await stack.provision('hsts', { minute: 100 });
  const answers = await Promise.all([
    overTls(stack, tls, '/v1/pets', key),
    overTls(stack, tls, '/v1/pets'),
    overTls(stack, tls, '/v1/pets/999999', key),
    overTls(stack, tls, '/elsewhere', key),
  ]);
  t.deepEqual(answers.map((answer) => answer.status), [200, 401, 404, 404]);
  for (const answer of answers) t.is(answer.headers.get('strict-transport-security'), HSTS, String(answer.status));
  t.is(answers[1].body.code, 'missing_api_key');
});

test('X-Forwarded-Proto: https counts from trusted_ips only (a TLS-terminating balancer), as the runloop\'s check', async (t) => {
  // the node trusts no one: a client cannot claim TLS
  const claimed = await httpGet(`${stack.gateway.proxyUrl}/v1/pets`, { headers: { 'x-forwarded-proto': 'https' } });
  t.is(claimed.status, 426);
  const key = await trusting.provision('behind-balancer', { minute: 100 });
  const forwarded = await httpGet(`${trusting.gateway.proxyUrl}/v1/pets`, { headers: { 'x-forwarded-proto': 'https', authorization: `Bearer ${key}` } });
  t.is(forwarded.status, 200);
  t.is(forwarded.headers['strict-transport-security'], HSTS);
  const plain = await httpGet(`${trusting.gateway.proxyUrl}/v1/pets`, { headers: { 'x-forwarded-proto': 'http', authorization: `Bearer ${key}` } });
  t.is(plain.status, 426);
  t.is(plain.json.code, 'https_required');
});

test('the portal over plain HTTP: a browser\'s GET or HEAD is redirected to https (301), a form POST refused 426 before the portal sees its password', async (t) => {
  for (const [method, path] of [['GET', '/portal/signin?next=%2Fportal%2F'], ['HEAD', '/portal/'], ['GET', '/portal']]) {
    const response = await httpGet(`${stack.gateway.proxyUrl}${path}`, { method });
    t.is(response.status, 301, `${method} ${path}`);
    // Kong's own https redirect's Location (kong/runloop/handler.lua:1273-1279): the host, no port
    t.is(response.headers.location, `https://127.0.0.1${path}`, `${method} ${path}`);
    t.is(response.headers['strict-transport-security'], undefined, `${method} ${path}`);
  }
  const post = await httpGet(`${stack.gateway.proxyUrl}/portal/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'email=alice%40example.com&password=a+passphrase+sent+in+clear',
  });
  t.is(post.status, 426);
  t.is(post.json.code, 'https_required');
  t.is(post.headers.location, undefined);
});

test('the portal over TLS: every answer carries HSTS, and its cookies, forms and own error pages pass the edge plugin untouched', async (t) => {
  const origin = stack.gateway.node.proxySslUrl!;
  const cookies = new Map<string, string>();
  const send = async (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size > 0) headers.set('cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(`${origin}${path}`, { ...init, headers, redirect: 'manual', dispatcher: tls } as RequestInit);
    for (const line of response.headers.getSetCookie()) {
      const [name, ...value] = line.split(';')[0]!.split('=');
      cookies.set(name!, value.join('='));
    }
    const page = { status: response.status, headers: response.headers, text: await response.text() };
    t.is(page.headers.get('strict-transport-security'), HSTS, `${init.method ?? 'GET'} ${path}`);
    return page;
  };
  const home = await send('/portal');
  t.is(home.status, 301);
  t.is(home.headers.get('location'), '/portal/');
  const form = await send('/portal/signup');
  t.is(form.status, 200);
  t.regex(form.headers.get('content-type') ?? '', /^text\/html/);
  const csrf = /name="_csrf" value="([^"]*)"/.exec(form.text)?.[1];
  t.truthy(csrf);
  const created = await send('/portal/signup', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf!, email: 'tls@example.com', name: 'TLS', password: 'a passphrase over TLS only' }),
  });
  t.is(created.status, 201);
  t.true(cookies.has('portal_session'));
  const key = shownKey(created);
  t.truthy(key);
  t.is((await overTls(stack, tls, '/v1/pets', key)).status, 200);
  const dashboard = await send('/portal/');
  t.is(dashboard.status, 200);
  t.regex(dashboard.text, /Plan <strong>free<\/strong>/);
  // the portal's own pages for errors are its own: HTML, not the gateway's Error JSON
  const missing = await send('/portal/no-such-page');
  t.is(missing.status, 404);
  t.regex(missing.headers.get('content-type') ?? '', /^text\/html/);
  const forged = await send('/portal/keys', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '_csrf=forged&name=x' });
  t.is(forged.status, 403);
  t.regex(forged.headers.get('content-type') ?? '', /^text\/html/);
});

test('over HTTP/2 the 426 has no Connection or Upgrade, which HTTP/2 forbids (RFC 9113 8.2.2): a trusted client saying X-Forwarded-Proto: http over h2 gets it whole', async (t) => {
  const ca = readFileSync(join(trusting.gateway.node.prefix, 'ssl', 'kong-default-ca.crt'));
  const session = http2Connect(trusting.gateway.node.proxySslUrl!, { ca, servername: 'localhost', checkServerIdentity: () => undefined });
  t.teardown(() => session.close());
  const answer = await new Promise<{ headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    session.once('error', reject);
    const stream = session.request({ ':path': '/v1/pets', ':authority': 'localhost', 'x-forwarded-proto': 'http' });
    let headers: Record<string, unknown> = {};
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (response) => (headers = response));
    stream.on('data', (chunk: string) => (body += chunk));
    // a connection-specific header in a response is a stream error: PROTOCOL_ERROR (curl: "(92)")
    stream.on('error', reject);
    stream.on('end', () => resolve({ headers, body }));
    stream.end();
  });
  t.is(session.alpnProtocol, 'h2');
  t.is(answer.headers[':status'], 426);
  t.is(answer.headers.upgrade, undefined);
  t.is(answer.headers.connection, undefined);
  t.is((JSON.parse(answer.body) as { code: string }).code, 'https_required');
});

test('npm start\'s setting (DECK_ANIMAL_STORE_HTTPS_ONLY=false): plain HTTP and TLS both served, no HSTS', async (t) => {
  const ca = readFileSync(join(plain.gateway.node.prefix, 'ssl', 'kong-default-ca.crt'));
  const agent = new Agent({ connect: { ca, servername: 'localhost' } });
  t.teardown(() => agent.close());
  const key = await plain.provision('both-schemes', { minute: 100 });
  const overHttp = await plain.call('/v1/pets', { key });
  const overHttps = await overTls(plain, agent, '/v1/pets', key);
  t.is(overHttp.status, 200);
  t.is(overHttps.status, 200);
  t.is(overHttp.headers.get('strict-transport-security'), null);
  // HSTS names a host, every port: on localhost it would break plain HTTP on 8000 in browsers
  t.is(overHttps.headers.get('strict-transport-security'), null);
});
