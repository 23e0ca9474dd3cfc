import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { startTestGateway, writeConfig } from '../helpers/gateway.ts';
import { httpGet } from '../helpers/http-request.ts';

// Kong 3.9.3 allows a route without a service (kong/db/schema/entities/routes.lua: service is an
// optional foreign key): a plugin may answer for it, and otherwise the request gets 503
// "no Service found with those values" (kong/init.lua:1230).

test('a route without a service: request-termination answers (spec/03-plugins/14-request-termination/02-access_spec.lua:45,113,202)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serviceless-'));
  const gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir });
  t.teardown(async () => {
    await gateway.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = (path: string, init?: Parameters<typeof request>[1]) => request(`${gateway.adminUrl}${path}`, init);
  const route7 = await admin('/routes', { method: 'POST', json: { hosts: ['api7.request-termination.test'] } });
  t.is(route7.status, 201, JSON.stringify(route7.body));
  t.is((route7.body as { service: unknown }).service, null);
  const plugin = await admin(`/routes/${(route7.body as { id: string }).id}/plugins`, { method: 'POST', json: { name: 'request-termination', config: {} } });
  t.is(plugin.status, 201, JSON.stringify(plugin.body));
  t.is((await admin('/routes', { method: 'POST', json: { name: 'bare', hosts: ['bare.test'] } })).status, 201);

  const terminated = await httpGet(`${gateway.proxyUrl}/status/200`, { headers: { host: 'api7.request-termination.test' } });
  t.is(terminated.status, 503);
  t.deepEqual(terminated.json, { message: 'Service unavailable' });
  const bare = await httpGet(`${gateway.proxyUrl}/status/200`, { headers: { host: 'bare.test', accept: 'application/json' } });
  t.is(bare.status, 503);
  t.like(bare.json, { message: 'no Service found with those values' });
});

// kong/db/schema/others/declarative_config.lua copy_record makes foreign keys optional: a
// top-level route of kong.yml may name no service (decK dumps service-less routes there).
test('kong.yml: a top-level route without a service, answered by its plugin', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serviceless-yml-'));
  const config = [
    '_format_version: "3.0"',
    'routes:',
    '  - name: maintenance',
    '    hosts: [api7.request-termination.test]',
    '    plugins:',
    '      - name: request-termination',
    '        config: { status_code: 451, content_type: text/html, body: "<html><body><h1>Service is down due to content infringement</h1></body></html>" }',
    '',
  ].join('\n');
  const gateway = await startTestGateway({ configFile: writeConfig(dir, config), dir });
  t.teardown(async () => {
    await gateway.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const route = await request(`${gateway.adminUrl}/routes/maintenance`);
  t.like(route.body, { name: 'maintenance', service: null });
  // spec/03-plugins/14-request-termination/02-access_spec.lua:270-279
  const res = await httpGet(`${gateway.proxyUrl}/status/200`, { headers: { host: 'api7.request-termination.test' } });
  t.is(res.status, 451);
  t.is(res.body, '<html><body><h1>Service is down due to content infringement</h1></body></html>');
  // Not `text/html` as configured: Kong's default nginx_http_charset = UTF-8
  // (kong/templates/kong_defaults.lua:89), injected at http level (kong/templates/nginx_kong.lua:41-44),
  // makes nginx's charset filter add it; spec/02-integration/05-proxy/03-upstream_headers_spec.lua:286-307
  // turns it off to get the content type unchanged.
  t.is(res.headers['content-type'], 'text/html; charset=UTF-8');
});
