import anyTest, { type TestFn } from 'ava';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { parse } from 'yaml';
import { httpGet } from '../helpers/http-request.ts';
import { pollUntil } from '../helpers/poll.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { startStack, type TestStack } from '../helpers/stack.ts';
import { startResettingUpstream, type ResettingUpstream } from '../helpers/upstream.ts';
import { freePort } from '../../packages/node-runtime/free-port.js';

// compose's balancer (deploy/nginx/kong-lb.conf) run with Debian's nginx in front of the local
// gateway as compose runs Kong: gateway/kong.yml with DECK_ANIMAL_STORE_HTTPS_ONLY=true, the
// balancer's address trusted (KONG_TRUSTED_IPS). No Docker here, so what Docker gives (the
// certificate volume, compose's DNS, nginx 1.28's `resolve` and `http2 on`) is swapped for local
// equivalents, line by line, below; everything else runs as written.

const test = anyTest.serial as TestFn<{ dir: string; stack: TestStack; nginx: ChildProcess; http: number; https: number; tls: Agent }>;
const CONF = readFileSync(join(REPO_ROOT, 'deploy/nginx/kong-lb.conf'), 'utf8');
const HSTS = 'max-age=63072000; includeSubDomains';

function replaceOnce(text: string, from: string | RegExp, to: string): string {
  const replaced = text.replace(from, to);
  if (replaced === text) throw new Error(`kong-lb.conf no longer has ${String(from)}`);
  return replaced;
}

/**
 * kong-lb.conf for Debian's nginx 1.22 on loopback: ports, upstreams (each `server kong:8000
 * resolve …` line once per address, as compose's DNS gives one address per replica), certificate
 * dir, pid, temp paths.
 */
function localConf(dir: string, ports: { http: number; https: number }, upstreams: string[]): string {
  let conf = CONF;
  conf = replaceOnce(conf, 'pid /tmp/nginx.pid;', `pid ${dir}/nginx.pid;`);
  const servers = conf.match(/^ *server kong:8000 resolve .*;$/gm) ?? [];
  if (servers.length === 0) throw new Error('kong-lb.conf no longer has server kong:8000 resolve');
  for (const server of servers) {
    const [, indent, parameters] = /^( *)server kong:8000 resolve (.*);$/.exec(server)!;
    conf = replaceOnce(conf, server, upstreams.map((upstream) => `${indent}server ${upstream} ${parameters};`).join('\n'));
  }
  conf = replaceOnce(conf, 'listen 80 ', `listen 127.0.0.1:${ports.http} `);
  // nginx 1.25.1 moved http2 from `listen` to its own directive
  conf = replaceOnce(conf, 'listen 443 ssl ', `listen 127.0.0.1:${ports.https} ssl http2 `);
  conf = replaceOnce(conf, /^\s*http2 on;\n/m, '');
  conf = conf.replaceAll('/etc/nginx/tls/', `${dir}/tls/`);
  conf = replaceOnce(conf, '/etc/nginx/ffdhe2048.pem', join(REPO_ROOT, 'deploy/nginx/ffdhe2048.pem'));
  conf = replaceOnce(conf, 'http {\n', `http {\n    client_body_temp_path ${dir}/body;\n    proxy_temp_path ${dir}/proxy;\n`);
  return conf;
}

/** The self-signed certificate kong-lb-certs makes (Kong's default: CN=localhost, RSA 2048). */
function makeCertificate(dir: string): void {
  execFileSync('mkdir', ['-p', join(dir, 'tls')]);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1',
    '-keyout', join(dir, 'tls', 'tls.key'), '-out', join(dir, 'tls', 'tls.crt')], { stdio: 'ignore' });
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket.end() && true));
    socket.once('error', () => resolve(false));
  });

/** kong-lb.conf run by nginx in `dir` (its certificate in dir/tls) in front of `upstreams`, once it listens. */
async function startKongLb(
  dir: string,
  upstreams: string[],
  onLine?: (line: string) => void,
): Promise<{ nginx: ChildProcess; http: number; https: number }> {
  const [http, https] = [await freePort(), await freePort()];
  const confPath = join(dir, 'nginx.conf');
  writeFileSync(confPath, localConf(dir, { http, https }, upstreams));
  const nginx = spawn('nginx', ['-p', `${dir}/`, '-c', confPath, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', onLine ? 'pipe' : 'ignore'] });
  nginx.stderr?.setEncoding('utf8').on('data', (chunk: string) => chunk.split('\n').filter(Boolean).forEach((line) => onLine!(line)));
  await pollUntil('the balancer to listen', async () => (await listening(http)) && (await listening(https)));
  return { nginx, http, https };
}

test.before(async (t) => {
  t.context.dir = mkdtempSync(join(tmpdir(), 'kong-lb-'));
  makeCertificate(t.context.dir);
  // the balancer connects from 127.0.0.1: trusted, as compose's 172.30.0.10 is
  t.context.stack = await startStack({
    env: { DECK_ANIMAL_STORE_HTTPS_ONLY: 'true' },
    node: { trustedIps: ['127.0.0.1'], realIpHeader: 'X-Forwarded-For', realIpRecursive: true },
  });
  Object.assign(t.context, await startKongLb(t.context.dir, [new URL(t.context.stack.gateway.proxyUrl).host]));
  t.context.tls = new Agent({ connect: { ca: readFileSync(join(t.context.dir, 'tls', 'tls.crt')), servername: 'localhost' } });
});
test.after.always(async (t) => {
  t.context.nginx?.kill('SIGTERM');
  await t.context.tls?.close();
  await t.context.stack?.dispose();
  rmSync(t.context.dir, { recursive: true, force: true });
});

test('kong-lb.conf is valid for nginx (nginx -t), certificate paths and all; compose runs an nginx that knows `resolve` and `http2 on`', (t) => {
  const image = (parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { image: string }> }).services['kong-lb']!.image;
  const [major, minor] = image.replace('nginx:', '').split('.').map(Number);
  t.true(major! > 1 || minor! >= 28, `${image}: upstream server ... resolve is nginx 1.27.3+`);
  const check = spawnSync('nginx', ['-t', '-p', `${t.context.dir}/`, '-c', join(t.context.dir, 'nginx.conf')], { encoding: 'utf8' });
  t.is(check.status, 0, check.stderr);
});

test('port 80 answers 426 https_required itself, with the body the edge plugin gives', async (t) => {
  const { stack } = t.context;
  const key = await stack.provision('lb-plain', { minute: 100 });
  const headers = { authorization: `Bearer ${key}` };
  const balancer = await httpGet(`http://127.0.0.1:${t.context.http}/v1/pets`, { headers });
  t.is(balancer.status, 426);
  t.is(balancer.headers['content-type'], 'application/json; charset=utf-8');
  t.is(balancer.headers.upgrade, 'TLS/1.2, HTTP/1.1');
  t.is(balancer.headers['strict-transport-security'], undefined);
  // the same answer as the edge plugin's, straight from the data plane over plain HTTP
  const kong = await httpGet(`${stack.gateway.proxyUrl}/v1/pets`, { headers });
  t.is(kong.status, 426);
  t.deepEqual(balancer.json, kong.json);
  t.is(balancer.json.code, 'https_required');
});

test('port 80 sends a browser to the developer portal over https (301, GET and HEAD), and refuses a form POSTed there 426', async (t) => {
  const origin = `http://127.0.0.1:${t.context.http}`;
  for (const [method, path] of [['GET', '/portal/signin?next=%2Fportal%2F'], ['HEAD', '/portal/'], ['GET', '/portal']]) {
    const response = await httpGet(`${origin}${path}`, { method });
    t.is(response.status, 301, `${method} ${path}`);
    t.is(response.headers.location, `https://127.0.0.1${path}`, `${method} ${path}`);
    t.is(response.headers.upgrade, undefined, `${method} ${path}`);
  }
  const post = await httpGet(`${origin}/portal/signin`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=sent+in+clear' });
  t.is(post.status, 426);
  t.is(post.headers.upgrade, 'TLS/1.2, HTTP/1.1');
  t.is(post.json.code, 'https_required');
  // only the portal's paths
  t.is((await httpGet(`${origin}/portalx`)).status, 426);
});

test('443 terminates TLS and forwards X-Forwarded-Proto: https, which the data plane trusts: our API, with HSTS', async (t) => {
  const { stack, tls } = t.context;
  const key = await stack.provision('lb-tls', { minute: 100 });
  const response = await fetch(`https://127.0.0.1:${t.context.https}/v1/pets`, { headers: { authorization: `Bearer ${key}` }, dispatcher: tls } as RequestInit);
  t.is(response.status, 200);
  t.true(Array.isArray(await response.json()));
  t.is(response.headers.get('strict-transport-security'), HSTS);
  t.is(response.headers.get('x-ratelimit-remaining'), '99');
  const keyless = await fetch(`https://127.0.0.1:${t.context.https}/v1/pets`, { dispatcher: tls } as RequestInit);
  t.is(keyless.status, 401);
  t.is(((await keyless.json()) as { code: string }).code, 'missing_api_key');
  t.is(keyless.headers.get('strict-transport-security'), HSTS);
});

test('malformed HTTP over TLS is answered by the balancer in the Error shape, never nginx\'s page nor a 5xx', async (t) => {
  for (const [request, status, code] of [
    ['GET /v1/pets HTTP/2.0\r\nHost: x\r\n\r\n', 400, 'bad_request'],
    ['POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n', 400, 'bad_request'],
    ['TRACE /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n', 405, 'method_not_allowed'],
  ] as const) {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ port: t.context.https, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => socket.end(request));
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    t.regex(text, new RegExp(`^HTTP/1.1 ${status} `), request);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { code: string; status: number };
    t.deepEqual([body.code, body.status], [code, status], request);
  }
});

test('TLS 1.1 is refused by the balancer, TLS 1.2 served (Kong\'s ssl_protocols)', (t) => {
  const client = (version: string) =>
    spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${t.context.https}`, '-servername', 'localhost', version, '-cipher', 'DEFAULT@SECLEVEL=0'], { input: '', encoding: 'utf8', timeout: 10_000 });
  const tls11 = client('-tls1_1');
  t.not(tls11.status, 0, tls11.stdout);
  const tls12 = client('-tls1_2');
  t.is(tls12.status, 0, tls12.stderr);
  t.regex(tls12.stdout, /Protocol\s*: TLSv1\.2/);
});

test('a TLS 1.2 client offering only DHE suites is served with the ffdhe2048 group (Kong\'s ssl_dhparam)', (t) => {
  const dhe = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${t.context.https}`, '-servername', 'localhost',
    '-tls1_2', '-cipher', 'DHE-RSA-AES128-GCM-SHA256'], { input: '', encoding: 'utf8', timeout: 10_000 });
  t.is(dhe.status, 0, dhe.stdout + dhe.stderr);
  t.regex(dhe.stdout, /Cipher\s*: DHE-RSA-AES128-GCM-SHA256/);
  t.regex(dhe.stdout, /Server Temp Key: DH, 2048 bits/);
});

test('every data plane resets one kept-alive connection (all reloaded at once): no 502, the request is tried again on the same data planes as backups', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kong-lb-'));
  cpSync(join(t.context.dir, 'tls'), join(dir, 'tls'), { recursive: true });
  const nodes: ResettingUpstream[] = [];
  t.teardown(async () => {
    await Promise.all(nodes.map((node) => node.close()));
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 2; i++) nodes.push(await startResettingUpstream());
  const logs: string[] = [];
  const balancer = await startKongLb(dir, nodes.map((node) => `127.0.0.1:${node.port}`), (line) => logs.push(line));
  t.teardown(() => void balancer.nginx.kill('SIGTERM'));
  const get = async () => (await fetch(`https://127.0.0.1:${balancer.https}/v1/pets`, { dispatcher: t.context.tls } as RequestInit)).status;
  // connections the balancer keeps alive (per worker: `worker_processes auto`); a reset on a fresh
  // connection fails the try as well, without the extra try a kept-alive one gets
  for (let i = 0; i < 4; i++) t.is(await get(), 200);
  for (const node of nodes) node.resetNext();
  const statuses: number[] = [];
  while (nodes.some((node) => node.resets === 0) && statuses.length < 200) statuses.push(await get());
  for (let i = 0; i < 20; i++) statuses.push(await get());
  t.deepEqual(nodes.map((node) => node.resets), [1, 1], 'each data plane reset one connection');
  t.deepEqual([...new Set(statuses)], [200], `every answer a 200: ${statuses.join(' ')}`);
  t.false(logs.some((line) => line.includes('no live upstreams')), logs.join('\n'));
});

test("no data plane answers: kong-lb's 502 is bad_gateway in the Error shape, not nginx's page", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kong-lb-'));
  cpSync(join(t.context.dir, 'tls'), join(dir, 'tls'), { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // a port nothing listens on
  const balancer = await startKongLb(dir, [`127.0.0.1:${await freePort()}`]);
  t.teardown(() => void balancer.nginx.kill('SIGTERM'));
  const response = await fetch(`https://127.0.0.1:${balancer.https}/v1/pets`, { dispatcher: t.context.tls } as RequestInit);
  t.is(response.status, 502);
  t.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
  t.deepEqual(await response.json(), { code: 'bad_gateway', message: 'The service behind the gateway could not be reached.', status: 502 });
});

test("a client's X-Forwarded-Prefix and -Path do not reach Kong, which trusts kong-lb: the backend's Link names /v1, not the client's prefix", async (t) => {
  const { stack, tls } = t.context;
  const key = await stack.provision('lb-prefix', { minute: 100 });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const base = `https://127.0.0.1:${t.context.https}/v1/pets`;
  for (const name of ['Rex', 'Tom']) {
    const created = await fetch(base, { method: 'POST', headers, body: JSON.stringify({ name, categoryId: 1 }), dispatcher: tls } as RequestInit);
    t.is(created.status, 201);
  }
  const page = await fetch(`${base}?limit=1`, {
    headers: { ...headers, 'x-forwarded-prefix': '/evil', 'x-forwarded-path': '/evil/pets' },
    dispatcher: tls,
  } as RequestInit);
  t.is(page.status, 200);
  t.regex(page.headers.get('link') ?? '', /^<\/v1\/pets\?limit=1&cursor=[\w-]+>; rel="next"$/);
});

test("a renewed certificate is served after `nginx -s reload` (docs/https.md), not before; `nginx -t` refuses a key that does not match", async (t) => {
  t.regex(readFileSync(join(REPO_ROOT, 'docs/https.md'), 'utf8'), /docker compose exec kong-lb nginx -t && docker compose exec kong-lb nginx -s reload/);
  const dir = mkdtempSync(join(tmpdir(), 'kong-lb-'));
  cpSync(join(t.context.dir, 'tls'), join(dir, 'tls'), { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const balancer = await startKongLb(dir, [`127.0.0.1:${await freePort()}`]);
  t.teardown(() => void balancer.nginx.kill('SIGTERM'));
  const served = () =>
    new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ port: balancer.https, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      });
      socket.on('error', reject);
    });
  const fingerprint = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;
  const old = fingerprint(join(dir, 'tls', 'tls.crt'));
  t.is(await served(), old);
  // the operator's renewal: both files replaced in ANIMAL_STORE_TLS_DIR
  makeCertificate(dir);
  const renewed = fingerprint(join(dir, 'tls', 'tls.crt'));
  t.not(renewed, old);
  t.is(await served(), old, 'nginx read the files at start: the old certificate until told');
  const nginx = (...args: string[]) => spawnSync('nginx', ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), ...args], { encoding: 'utf8' });
  const check = nginx('-t');
  t.is(check.status, 0, check.stderr);
  const reload = nginx('-s', 'reload');
  t.is(reload.status, 0, reload.stderr);
  await pollUntil('the renewed certificate', async () => (await served()) === renewed);

  // a key of another certificate: `nginx -t` says so before a reload is tried
  cpSync(join(t.context.dir, 'tls', 'tls.key'), join(dir, 'tls', 'tls.key'));
  const mismatch = nginx('-t');
  t.not(mismatch.status, 0);
  t.regex(mismatch.stderr, /key values mismatch/);
});
