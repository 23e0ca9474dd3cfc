import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { startTestGateway, writeConfig } from '../helpers/gateway.ts';

// The credential types the gateway does not run, where go-kong and decK write them: under a
// consumer (kong/plugins/{basic-auth,hmac-auth,jwt,oauth2}/api.lua, Kong 3.9.3). A write answers the
// 400 naming the type that docs/known-differences.md documents, not 404 "Not found".

test('credential types it does not run: under a consumer, lists empty, lookups 404, writes 400 naming the type', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'refused-credentials-'));
  const gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir });
  t.teardown(async () => {
    await gateway.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = (path: string, init?: Parameters<typeof request>[1]) => request(`${gateway.adminUrl}${path}`, init);
  const consumer = await admin('/consumers', { method: 'POST', json: { username: 'alice' } });
  t.is(consumer.status, 201);
  const id = (consumer.body as { id: string }).id;
  for (const [type, nested] of [['basic-auths', 'basic-auth'], ['hmac-auths', 'hmac-auth'], ['jwts', 'jwt'], ['oauth2', 'oauth2']] as const) {
    const list = await admin(`/consumers/alice/${nested}`);
    t.is(list.status, 200, nested);
    t.deepEqual((list.body as { data: unknown[] }).data, [], nested);
    t.is((await admin(`/consumers/nobody/${nested}`)).status, 404, nested);
    t.is((await admin(`/consumers/${id}/${nested}/a0b1c2d3-0000-4000-8000-000000000000`)).status, 404, nested);
    for (const [method, path] of [['POST', `/consumers/${id}/${nested}`], ['PUT', `/consumers/alice/${nested}/c1`], ['PATCH', `/consumers/alice/${nested}/c1`]]) {
      const write = await admin(path!, { method, json: { username: 'alice', password: 'secret', key: 'k', name: 'app' } });
      t.is(write.status, 400, `${method} ${path}`);
      t.like(write.body, { code: 2, name: 'schema violation' }, `${method} ${path}`);
      t.regex((write.body as { message: string }).message, new RegExp(`${type}: not supported by the local gateway`), `${method} ${path}`);
    }
  }
});
