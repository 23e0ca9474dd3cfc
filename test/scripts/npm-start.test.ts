// `npm start` (scripts/stack/start.ts): the backend and the local gateway as two processes under
// one supervisor, started here as npm does, on ephemeral ports.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import { parse } from 'yaml';
import { request } from '../helpers/backend.ts';
import { pollUntil } from '../helpers/poll.ts';
import { REPO_ROOT, spawnTs, type SpawnedProcess } from '../helpers/process.ts';

// The status listener is off: several stacks run side by side, and its default port is fixed.
const EPHEMERAL = { BACKEND_PORT: '0', PORTAL_PORT: '0', KONG_PROXY_LISTEN: '127.0.0.1:0', KONG_ADMIN_LISTEN: '127.0.0.1:0', KONG_STATUS_LISTEN: 'off' };

function startStack(t: ExecutionContext, env: NodeJS.ProcessEnv = {}, relativeDataDir = false): SpawnedProcess & { dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'npm-start-'));
  const dataDir = relativeDataDir ? relative(REPO_ROOT, dir) : dir;
  const stack = spawnTs('scripts/stack/start.ts', [], { ...EPHEMERAL, DATA_DIR: dataDir, ...env });
  t.teardown(() => {
    stack.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return { ...stack, dir };
}

async function banner(stack: SpawnedProcess) {
  const [, proxy, nginxPid] = await stack.waitFor(/proxy\s+(http:\/\/\S+)\/v1\s+\(data plane: nginx pid (\d+)/, 60_000);
  const [, admin, gatewayPid] = await stack.waitFor(/admin API\s+(http:\/\/\S+)\s+\(control plane, pid (\d+)/);
  const [, backend, backendPid] = await stack.waitFor(/backend\s+(http:\/\/\S+)\s+\(backend, pid (\d+)/);
  const [, portal, portalPid] = await stack.waitFor(/portal\s+(https?:\/\/\S+)\s+\(developer portal, pid (\d+)/);
  await stack.waitFor(/kill -HUP \d+/);
  const pids = { gatewayPid: Number(gatewayPid), nginxPid: Number(nginxPid), backendPid: Number(backendPid), portalPid: Number(portalPid) };
  return { proxy: proxy!, admin: admin!, backend: backend!, portal: portal!, ...pids };
}

/** Running, i.e. neither gone nor a zombie waiting for whoever adopted it to reap it. */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

function busyPort(t: ExecutionContext): Promise<number> {
  const server: Server = createServer();
  t.teardown(() => server.close());
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

/** kong.yml's select tags: a file reloaded in their place replaces what kong.yml declared. */
const KONG_YML = join(REPO_ROOT, 'gateway/kong.yml');
const selectTags = (parse(readFileSync(KONG_YML, 'utf8')) as { _info: { select_tags: string[] } })._info.select_tags;

// One stack for all three (a whole-stack start is ~2-4 CPU-s); the other tests' stacks use
// absolute DATA_DIRs and the repository's kong.yml.
test('three processes, a banner whose commands use the addresses in use, and one Ctrl-C stops them all; a relative DATA_DIR, as the default ./data is, holds the gateway\'s prefix and the databases; SIGHUP reloads kong.yml in the running stack', async (t) => {
  const files = mkdtempSync(join(tmpdir(), 'npm-start-kong-yml-'));
  t.teardown(() => rmSync(files, { recursive: true, force: true }));
  const file = join(files, 'kong.yml');
  copyFileSync(KONG_YML, file);
  const stack = startStack(t, { KONG_DECLARATIVE_CONFIG: file }, true);
  const { proxy, admin, backend, portal, gatewayPid, nginxPid, backendPid, portalPid } = await banner(stack);
  t.is(portal, `${proxy}/portal/`);
  const signUp = await fetch(`${portal}signup`);
  t.is(signUp.status, 200, 'the portal answers through the gateway, sign-up open on a developer machine');
  t.regex(await signUp.text(), /Create your account/);
  t.not(gatewayPid, stack.child.pid);
  t.not(backendPid, stack.child.pid);
  t.not(gatewayPid, backendPid);
  t.is((await request(`${backend}/pets?limit=1`)).status, 200, 'the backend answers on the address shown');
  t.is((await request(`${proxy}/v1/pets`)).status, 401, 'the proxy answers on the address shown');
  t.is((await request(admin)).status, 200, 'the Admin API answers on the address shown');
  // The hints: the CLI is pointed at this Admin API, curl at this proxy, HUP at the gateway's pid.
  t.true(stack.output().includes(`KONG_ADMIN_URL=${admin} npm run consumers -- create`));
  t.true(stack.output().includes(`curl -si ${proxy}/v1/pets`));
  t.true(stack.output().includes(`kill -HUP ${gatewayPid}\n`));

  // SIGHUP to the process the banner names reloads the file; a broken one keeps what runs
  t.is((await request(`${proxy}/b/pets`)).status, 404);
  const reloaded = `_format_version: "3.0"\n_info:\n  select_tags: ${JSON.stringify(selectTags)}\nservices:\n  - name: s\n    url: \${{ env "DECK_ANIMAL_STORE_BACKEND_URL" }}\n    routes: [{ name: b, paths: [/b/] }]\n`;
  writeFileSync(file, reloaded);
  process.kill(gatewayPid, 'SIGHUP');
  await stack.waitFor(/kong.yml reloaded/);
  // Reloaded once the node runs it, within the 1 s bound a loaded machine can pass: poll.
  await pollUntil('the node to run the reloaded kong.yml', async () => (await request(`${proxy}/b/pets`)).status === 200);
  t.is((await request(`${proxy}/v1/pets`)).status, 404, 'the routes of the file before are gone');
  writeFileSync(file, 'services: [[[');
  process.kill(gatewayPid, 'SIGHUP');
  await stack.waitFor(/NOT reloaded/);
  t.is((await request(`${proxy}/b/pets`)).status, 200);

  stack.child.kill('SIGINT');
  t.deepEqual(await stack.exited, { code: 0, signal: null });
  t.false(alive(gatewayPid));
  t.false(alive(nginxPid), 'the data plane stops with the gateway');
  t.false(alive(backendPid));
  t.false(alive(portalPid));
});

test('KONG_LOG_LEVEL warn: the stack starts, and the gateway\'s error.log holds nothing below warn, its own lines as nginx\'s', async (t) => {
  const stack = startStack(t, { KONG_LOG_LEVEL: 'warn' });
  const { proxy } = await banner(stack);
  t.is((await request(`${proxy}/v1/pets`)).status, 401);
  stack.child.kill('SIGINT');
  t.deepEqual(await stack.exited, { code: 0, signal: null });
  const log = readFileSync(join(stack.dir, 'gateway', 'logs', 'error.log'), 'utf8');
  t.deepEqual(log.split('\n').filter((line) => /^info: |\[(info|notice)\]/.test(line)), []);
});

test('when one process dies the supervisor says so, stops the other and exits 1 (no restart)', async (t) => {
  const stack = startStack(t);
  const { backendPid, gatewayPid, nginxPid } = await banner(stack);
  process.kill(backendPid, 'SIGKILL');
  t.is((await stack.exited).code, 1);
  t.regex(stack.output(), new RegExp(`\\[stack\\] backend \\(pid ${backendPid}\\) stopped unexpectedly \\(killed by SIGKILL\\); stopping the rest\n`));
  t.false(alive(gatewayPid));
  t.false(alive(nginxPid));
});

test('when nginx dies the gateway says so and the supervisor stops everything', async (t) => {
  const stack = startStack(t);
  const { backendPid, gatewayPid, nginxPid } = await banner(stack);
  process.kill(nginxPid, 'SIGKILL');
  t.is((await stack.exited).code, 1);
  t.regex(stack.output(), new RegExp(`the data-plane node \\(nginx, pid ${nginxPid}\\) exited \\(SIGKILL\\)`));
  t.false(alive(gatewayPid));
  t.false(alive(backendPid));
});

test('a supervisor killed with SIGKILL leaves no process behind: each child stops when the IPC channel closes; with an ssl listener and https only (DECK_ANIMAL_STORE_HTTPS_ONLY=true), npm start prints the https address, the portal\'s, and as `Use it:` a curl command over https that trusts the default certificates, and it works', async (t) => {
  // (gateway/https.test.ts tests the listener itself)
  const stack = startStack(t, { KONG_PROXY_LISTEN: '127.0.0.1:0, 127.0.0.1:0 http2 ssl', DECK_ANIMAL_STORE_HTTPS_ONLY: 'true' });
  const { proxy, portal, backendPid, gatewayPid, nginxPid, portalPid } = await banner(stack);
  const [, https] = await stack.waitFor(/https\s+(https:\/\/127\.0\.0\.1:\d+)\/v1\s+\(TLS 1\.2\/1\.3 and HTTP\/2; self-signed, trust \S+kong-default-ca\.crt\)/);
  const [, command] = await stack.waitFor(/Use it:\s+(curl .+)\n/);
  const port = new URL(https!).port;
  t.is(command, `curl -si --cacert ${join(stack.dir, 'gateway', 'node', 'ssl', 'kong-default-ca.crt')} https://localhost:${port}/v1/pets -H 'Authorization: Bearer <key>'`);
  // the command as printed, through a shell; curl negotiates HTTP/2 by ALPN
  const { stdout } = await promisify(execFile)('sh', ['-c', command!], { timeout: 15_000 });
  t.regex(stdout, /^HTTP\/2 401 /m);
  // plain HTTP answers 426 there: the banner prints no plain command, and the portal's https address
  t.is((await request(`${proxy}/v1/pets`)).status, 426);
  t.false(stack.output().includes(`curl -si ${proxy}`));
  t.is(portal, `https://localhost:${port}/portal/`);
  // the portal's own links (the API address it shows, invitations) start there too
  const cacert = join(stack.dir, 'gateway', 'node', 'ssl', 'kong-default-ca.crt');
  const reference = await promisify(execFile)('curl', ['-s', '--cacert', cacert, `https://localhost:${port}/portal/reference`], { timeout: 15_000 });
  t.true(reference.stdout.includes(`<code>https://localhost:${port}/v1</code>`), reference.stdout.slice(0, 300));

  stack.child.kill('SIGKILL');
  await stack.exited;
  const deadline = Date.now() + 20_000;
  const anyAlive = () => alive(backendPid) || alive(gatewayPid) || alive(nginxPid) || alive(portalPid);
  while (anyAlive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  t.false(alive(backendPid));
  t.false(alive(gatewayPid));
  t.false(alive(nginxPid));
  t.false(alive(portalPid));
});

test('a busy BACKEND_PORT is one line naming the address and the variables', async (t) => {
  const port = await busyPort(t);
  const stack = startStack(t, { BACKEND_PORT: String(port) });
  t.is((await stack.exited).code, 1);
  t.is(stack.output(), `[backend] cannot listen on 127.0.0.1:${port} (BACKEND_HOST, BACKEND_PORT): address already in use\n`);
});

test('a busy proxy or Admin API port is one line naming the address and the variable; the backend is stopped', async (t) => {
  const port = await busyPort(t);
  for (const variable of ['KONG_PROXY_LISTEN', 'KONG_ADMIN_LISTEN', 'KONG_STATUS_LISTEN']) {
    const stack = startStack(t, { [variable]: `127.0.0.1:${port}` });
    t.is((await stack.exited).code, 1);
    t.is(stack.output(), `[gateway] cannot listen on 127.0.0.1:${port} (${variable}): address already in use\n`);
  }
});

test('bad settings and a missing kong.yml are one line each, naming the variable or the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'npm-start-bad-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'not-a-dir'), '');
  const cases: [NodeJS.ProcessEnv, number, string][] = [
    [{ KONG_ADMIN_LISTEN: 'localhost' }, 2, `[gateway] KONG_ADMIN_LISTEN must look like host:port (Kong's format), got "localhost"`],
    [{ BACKEND_PORT: 'http' }, 2, '[backend] BACKEND_PORT must be a port number, got "http"'],
    [{ KONG_DECLARATIVE_CONFIG: join(dir, 'missing.yml') }, 1, `[gateway] cannot open ${join(dir, 'missing.yml')} (KONG_DECLARATIVE_CONFIG): no such file or directory`],
    [{ DATA_DIR: join(dir, 'not-a-dir') }, 1, `[backend] cannot open the database (DATA_DIR=${join(dir, 'not-a-dir')}): a file is in the way`],
    [{ KONG_LOG_LEVEL: 'WARN' }, 2, "[gateway] KONG_LOG_LEVEL has an invalid value: 'WARN' (debug, info, notice, warn, error, crit, alert, emerg)"],
    [{ KONG_LUA_SSL_VERIFY_DEPTH: 'deep' }, 2, '[gateway] KONG_LUA_SSL_VERIFY_DEPTH must be a non-negative integer, got "deep"'],
    [{ KONG_LUA_SSL_TRUSTED_CERTIFICATE: 'system,/no/such/ca.pem' }, 1, '[gateway] refusing to start: KONG_LUA_SSL_TRUSTED_CERTIFICATE: failed loading certificate from /no/such/ca.pem'],
  ];
  await Promise.all(
    cases.map(async ([env, code, line]) => {
      const stack = startStack(t, env);
      t.is((await stack.exited).code, code);
      t.is(stack.output(), `${line}\n`);
    }),
  );
});
