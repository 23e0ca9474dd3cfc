// The backend image runs compiled JavaScript on plain node (backend/Dockerfile). No Docker engine
// here, so this runs the Dockerfile's own build command and start command outside a container.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { REPO_ROOT, spawnNode } from '../helpers/process.ts';

const dockerfile = readFileSync(join(REPO_ROOT, 'backend/Dockerfile'), 'utf8');
const lastStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

test('the image builds with the npm script, keeps only production dependencies and starts plain node', (t) => {
  t.regex(dockerfile, /^RUN npm run build:backend && npm prune --omit=dev\b/m);
  t.regex(lastStage, /^COPY --from=build \/app\/dist\/backend \.\/dist\/backend$/m);
  // dist/backend/http/contract-routes.js reads ../../../gateway/openapi.yaml: /app/gateway/ in the image.
  t.regex(lastStage, /^COPY gateway\/openapi\.yaml \.\/gateway\/openapi\.yaml$/m);
  t.notRegex(lastStage, /tsx|COPY backend\b/);
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(lastStage)?.[1] ?? 'null') as string[] | null;
  t.deepEqual(cmd?.slice(0, 1), ['node']);
  t.false(cmd!.includes('tsx'));
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  t.false('tsx' in pkg.dependencies, 'tsx is a development tool; the image prunes it');
});

test('both stages pin Node 24 LTS, the major .ci/run also tests on', (t) => {
  const images = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
  t.deepEqual(images, ['node:24-bookworm', 'node:24-bookworm-slim']);
  t.regex(dockerfile, /end of life/, 'the Dockerfile says why the major is pinned');
});

test('the built backend serves pets on plain node and stops cleanly on SIGTERM', async (t) => {
  // Build and run on the Node running this test (npm's `env node` finds it first): under .ci/run's
  // Node 24 pass this is the image's Node 24 build; under the Node 20 pass, the Node 20 one.
  const path = `${dirname(process.execPath)}:${process.env.PATH}`;
  t.log(`built and started with Node ${process.version}`);
  await promisify(execFile)('npm', ['run', 'build:backend'], { cwd: REPO_ROOT, env: { ...process.env, PATH: path } });
  const emitted = readdirSync(join(REPO_ROOT, 'dist/backend'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js'));
  t.true(emitted.includes('main.js'));
  for (const file of emitted) {
    t.notRegex(readFileSync(join(REPO_ROOT, 'dist/backend', file), 'utf8'), /from ["']\.{1,2}\/[^"']*\.ts["']/, file);
  }

  const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-image-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(lastStage)![1]!) as string[];
  const backend = spawnNode(cmd.slice(1), { BACKEND_PORT: '0', DATA_DIR: dataDir, NODE_OPTIONS: '' });
  t.teardown(() => backend.child.kill('SIGKILL'));
  const [, url] = await backend.waitFor(/listening on (http:\/\/\S+)/);

  const created = await request(`${url}/pets`, { method: 'POST', json: { name: 'Built', categoryId: 1 } });
  t.is(created.status, 201);
  t.deepEqual((await request(`${url}/pets/${created.body.id}`)).body, created.body);
  t.is((await request(`${url}/openapi.json`)).body.openapi, '3.1.0');
  backend.child.kill('SIGTERM');
  t.is((await backend.exited).code, 0);
});
