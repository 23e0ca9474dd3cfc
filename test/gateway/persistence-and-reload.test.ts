import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { startEchoUpstream, startTestGateway, writeConfig } from '../helpers/gateway.ts';
import { pollUntil } from '../helpers/poll.ts';
import { spawnTs } from '../helpers/process.ts';

// Entities created through the Admin API live in SQLite and survive restarts; kong.yml is the
// declarative layer, synced within its select tags as `deck gateway sync --select-tag` would.

const config = (upstream: string, extraRoute = '') => `_format_version: "3.0"
_info:
  select_tags: [team-a]
services:
  - name: s
    url: ${upstream}
    routes:
      - name: r
        paths: [/r]
${extraRoute}plugins:
  - name: key-auth
consumers:
  - username: declared
    keyauth_credentials: [{ key: k-declared }]
`;

test('admin-created consumers survive a restart and a reload; declarative ones follow the file', async (t) => {
  const upstream = await startEchoUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'persist-'));
  t.teardown(async () => {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const file = writeConfig(dir, config(upstream.url));
  const first = await startTestGateway({ configFile: file, dir });
  const created = await request(`${first.adminUrl}/consumers`, { method: 'POST', json: { username: 'admin-made' } });
  t.is(created.status, 201);
  await request(`${first.adminUrl}/consumers/admin-made/key-auth`, { method: 'POST', json: { key: 'k-admin' } });
  await first.close();

  const second = await startTestGateway({ configFile: file, dir });
  t.teardown(() => second.close());
  t.is((await request(`${second.proxyUrl}/r`, { headers: { apikey: 'k-admin' } })).status, 200);
  const again = await request(`${second.adminUrl}/consumers/admin-made`);
  t.is(again.body.id, created.body.id);

  // Drop the declared consumer from the file and reload: it goes, the admin-made one stays.
  writeFileSync(file, config(upstream.url).replace(/consumers:[\s\S]*$/, ''));
  const summary = await second.reload();
  t.is(summary.deleted, 2, 'the consumer and its credential');
  t.is((await request(`${second.adminUrl}/consumers/declared`)).status, 404);
  t.is((await request(`${second.proxyUrl}/r`, { headers: { apikey: 'k-admin' } })).status, 200);
  const tagged = await request(`${second.adminUrl}/consumers?tags=team-a`);
  t.deepEqual(tagged.body.data, []);
});

test('a bad file on reload keeps the running configuration and says why', async (t) => {
  const upstream = await startEchoUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'reload-'));
  const file = writeConfig(dir, config(upstream.url));
  const gateway = await startTestGateway({ configFile: file, dir });
  t.teardown(async () => {
    await gateway.dispose();
    await upstream.close();
  });
  writeFileSync(file, config(upstream.url, '      - name: broken\n        paths: [/b]\n        colour: red\n'));
  const error = await t.throwsAsync(() => gateway.reload());
  t.regex(error.message, /routes\[1\] \(broken\): colour: unknown field/);
  t.is((await request(`${gateway.proxyUrl}/r`, { headers: { apikey: 'k-declared' } })).status, 200);
  t.is((await request(`${gateway.proxyUrl}/b`, { headers: { apikey: 'k-declared' } })).status, 404);
});

test('SIGHUP reloads kong.yml in the running stack (npm start)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sighup-'));
  const file = join(dir, 'kong.yml');
  writeFileSync(file, `_format_version: "3.0"\nservices:\n  - name: s\n    url: \${{ env "DECK_ANIMAL_STORE_BACKEND_URL" }}\n    routes: [{ name: a, paths: [/a/] }]\n`);
  const stack = spawnTs('scripts/stack/start.ts', [], {
    BACKEND_PORT: '0',
    DATA_DIR: dir,
    KONG_DECLARATIVE_CONFIG: file,
    KONG_PROXY_LISTEN: '127.0.0.1:0',
    KONG_ADMIN_LISTEN: '127.0.0.1:0',
  });
  t.teardown(() => {
    stack.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const [, proxy] = await stack.waitFor(/proxy\s+(http:\/\/\S+)\/v1/, 60_000);
  const gatewayPid = Number((await stack.waitFor(/kill -HUP (\d+)/))[1]); // the banner names the process that reloads
  t.is((await request(`${proxy}/a/pets`)).status, 200);
  t.is((await request(`${proxy}/b/pets`)).status, 404);
  writeFileSync(file, `_format_version: "3.0"\nservices:\n  - name: s\n    url: \${{ env "DECK_ANIMAL_STORE_BACKEND_URL" }}\n    routes: [{ name: b, paths: [/b/] }]\n`);
  process.kill(gatewayPid, 'SIGHUP');
  await stack.waitFor(/kong.yml reloaded/);
  // Reloaded once the node runs it, within the 1 s bound a loaded machine can pass: poll.
  await pollUntil('the node to run the reloaded kong.yml', async () => (await request(`${proxy}/b/pets`)).status === 200);
  t.is((await request(`${proxy}/a/pets`)).status, 404);
  writeFileSync(file, 'services: [[[');
  process.kill(gatewayPid, 'SIGHUP');
  await stack.waitFor(/NOT reloaded/);
  t.is((await request(`${proxy}/b/pets`)).status, 200);
  stack.child.kill('SIGTERM');
  t.is((await stack.exited).code, 0);
});
