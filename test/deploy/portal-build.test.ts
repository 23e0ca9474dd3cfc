// The portal's image (deploy/portal/Dockerfile) and its compose service. No Docker engine here, so
// this runs the Dockerfile's own build command, lays the result out as the image's COPY lines do,
// and starts it with the image's CMD on plain node against a real local gateway.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { parse } from 'yaml';
import { PortalBrowser, shownKey } from '../helpers/portal.ts';
import { REPO_ROOT, spawnNode } from '../helpers/process.ts';
import { startStack } from '../helpers/stack.ts';

const dockerfile = readFileSync(join(REPO_ROOT, 'deploy/portal/Dockerfile'), 'utf8');
const lastStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
type Service = {
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  expose?: string[];
};
const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const portal = compose.services.portal!;
const PASSWORD = 'correct horse battery staple';

test('the image builds with the npm script, pins Node 24 and starts plain node as a non-root user', (t) => {
  t.deepEqual([...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]), ['node:24-bookworm', 'node:24-bookworm-slim']);
  t.regex(dockerfile, /^RUN npm run build:portal && npm prune --omit=dev\b/m);
  t.regex(lastStage, /^COPY --from=build \/app\/dist\/portal \.\/portal$/m);
  t.regex(lastStage, /^COPY --from=build \/app\/dist\/gateway \.\/gateway$/m);
  t.regex(lastStage, /^USER node$/m);
  t.regex(lastStage, /^VOLUME \/data$/m);
  t.regex(lastStage, /^HEALTHCHECK .*http:\/\/127\.0\.0\.1:3001\/portal\/signin/m);
  t.regex(lastStage, /^ENV .*\bPORTAL_SIGNUP=invite\b/m);
  t.notRegex(dockerfile, /^(ENV|ARG) .*PORTAL_COOKIE_SECRET/m, 'the cookie secret is never baked into the image');
  t.notRegex(lastStage, /tsx/);
  t.deepEqual(JSON.parse(/^CMD (\[.*\])$/m.exec(lastStage)![1]!), ['node', 'portal/server/main.mjs']);
  t.regex(dockerfile, /^#\s+docker compose exec portal node portal\/server\/consumers\.mjs invite \S+$/m, 'the invitation command it documents');
});

test("compose runs it where deck-sync's route points, on kong-cp's Admin API as plan-limits does, with its data in PostgreSQL", (t) => {
  t.deepEqual(portal.build, { context: '.', dockerfile: 'deploy/portal/Dockerfile' });
  const env = portal.environment!;
  const upstream = new URL(compose.services['deck-sync']!.environment!.DECK_ANIMAL_STORE_PORTAL_URL!);
  t.is(upstream.hostname, 'portal');
  t.is(env.PORTAL_PORT, upstream.port);
  t.deepEqual(portal.expose, [upstream.port]);
  t.is(portal.ports, undefined, 'reached through the gateway only');
  t.is(env.KONG_ADMIN_URL, compose.services['plan-limits']!.environment!.KONG_ADMIN_URL);
  t.is(env.PORTAL_SIGNUP, '${PORTAL_SIGNUP:-invite}');
  t.is(env.PORTAL_COOKIE_SECRET, '${PORTAL_COOKIE_SECRET:-}', "from compose's environment, else one made once in the portal's database");
  // its store is the stack's PostgreSQL (compose.test.ts checks the database's one-shot): no volume of its own
  t.is(env.PORTAL_DATABASE_URL, 'postgres://portal@postgres:5432/portal');
  t.is(portal.volumes, undefined);
  t.false('portal-data' in compose.volumes);
});

test('the bundle `npm run build:portal` makes, laid out as in the image, serves the portal on plain node', async (t) => {
  // Where the time goes, in one line: this test took 67 s in some CI runs and ~5 s elsewhere.
  const started = Date.now();
  const phases: string[] = [];
  const phase = (name: string) => phases.push(`${name} ${Date.now() - started}`);
  t.teardown(() => t.log(`ms since the start: ${phases.join(', ')}`));
  await promisify(execFile)('npm', ['run', 'build:portal'], { cwd: REPO_ROOT });
  phase('built');
  // /app of the image: the bundle and its assets, the plan catalogue, the production node_modules
  const app = mkdtempSync(join(tmpdir(), 'animal-store-portal-image-'));
  const data = join(app, 'data');
  t.teardown(() => rmSync(app, { recursive: true, force: true }));
  cpSync(join(REPO_ROOT, 'dist/portal'), join(app, 'portal'), { recursive: true });
  cpSync(join(REPO_ROOT, 'dist/gateway'), join(app, 'gateway'), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(app, 'node_modules'));

  const stack = await startStack();
  phase('stack');
  t.teardown(() => stack.dispose());
  t.teardown(() => {
    const warnings = stack.gateway.logs.filter((line) => line.startsWith('warn:'));
    if (warnings.length > 0) t.log(`the gateway's warnings: ${warnings.join(' | ')}`);
  });
  const server = spawnNode([join(app, 'portal/server/main.mjs')], {
    NODE_OPTIONS: '',
    PORTAL_PORT: '0',
    PORTAL_DATA_DIR: data,
    // unset, as in the image: spawn leaves out undefined values
    PORTAL_SIGNUP: undefined,
    PORTAL_COOKIE_SECRET: undefined,
    KONG_ADMIN_URL: stack.gateway.adminUrl,
    KONG_STATUS_URL: '',
  });
  t.teardown(() => server.child.kill('SIGKILL'));
  // the image's default: PORTAL_SIGNUP unset is invitation only
  const [, url] = await server.waitFor(/listening on (http:\/\/\S+) \(sign-up invite\)/);
  phase('portal');

  const b = new PortalBrowser(url!);
  const signin = await b.get('/portal/signin');
  t.is(signin.status, 200);
  t.regex(signin.headers.get('content-type')!, /^text\/html/);
  const css = await fetch(`${url}/portal/assets/portal.css`);
  t.is(css.status, 200);
  t.is(await css.text(), readFileSync(join(REPO_ROOT, 'portal/src/assets/portal.css'), 'utf8'));
  t.is((await fetch(`${url}/portal/assets/copy.js`)).status, 200);
  // the API reference: the description from dist/gateway/, Swagger UI from node_modules
  const reference = await b.get('/portal/reference');
  t.is(reference.status, 200);
  const spec = (await (await fetch(`${url}/portal/reference/openapi.json`)).json()) as { servers: Array<{ url: string }> };
  t.deepEqual(spec.servers.map((server) => server.url), ['http://127.0.0.1:8000/v1']);
  const bundle = /<script src="([^"]*swagger-ui-bundle\.js)"/.exec(reference.text)![1]!;
  t.is((await fetch(`${url}${bundle}`)).status, 200);

  // an invitation from the bundled CLI, as `docker compose exec portal node portal/server/consumers.mjs
  // invite …` prints it into the same store; then the dashboard reads the plan catalogue
  const cli = spawnNode([join(app, 'portal/server/consumers.mjs'), 'invite', 'built@example.com', '--json'], {
    NODE_OPTIONS: '',
    PORTAL_DATA_DIR: data,
    PORTAL_PUBLIC_URL: 'https://api.animal.store',
  });
  t.is((await cli.exited).code, 0, cli.output());
  phase('invited');
  const { link } = JSON.parse(cli.output()) as { link: string };
  t.regex(link, /^https:\/\/api\.animal\.store\/portal\/signup\?invite=/);
  const token = new URL(link).searchParams.get('invite')!;
  await b.get(`/portal/signup?invite=${token}`);
  const created = await b.post('/portal/signup', { invite: token, email: 'built@example.com', name: 'Built', password: PASSWORD });
  t.is(created.status, 201);
  phase('signed up');
  t.is((await stack.call('/v1/pets', { key: shownKey(created)! })).status, 200);
  const dashboard = await b.get('/portal/');
  t.regex(dashboard.text, /Plan <strong>free<\/strong>: 60 requests a minute, 1000 a day/);

  phase('called');
  server.child.kill('SIGTERM');
  t.is((await server.exited).code, 0);
  phase('stopped');
});
