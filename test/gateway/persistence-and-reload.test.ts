import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { startEchoUpstream, startTestGateway, writeConfig } from '../helpers/gateway.ts';

// Entities created through the Admin API live in SQLite and survive restarts; kong.yml is the
// declarative layer, synced within its select tags as `deck gateway sync --select-tag` would.
// SIGHUP in the running stack (`npm start`): test/scripts/npm-start.test.ts, on its first stack.

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
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
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
