import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { createKongAdminClient } from '../../scripts/kong-admin/client.ts';
import { loadCatalogue } from '../../scripts/lib/plans.ts';
import { Provisioning } from '../../scripts/lib/provisioning.ts';

// rotate-key against entities shaped as Kong 3.9 returns them. Kong's Admin API reads every
// entity with `nulls = true` (kong/api/endpoints.lua, extract_options), so a field that is not
// set comes back as JSON null; for key-auth credentials (kong/plugins/key-auth/daos.lua,
// `ttl = true`) a key that never expires answers `"ttl": null`. This double answers in that
// shape, whatever the local gateway does.

const CONSUMER_ID = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const consumer = {
  id: CONSUMER_ID,
  created_at: 1893456000,
  updated_at: 1893456000,
  username: 'kong-shaped',
  custom_id: null,
  tags: ['petstore-consumer', 'plan:pro'],
};

function credential(id: string, key: string, ttl: number | null) {
  return { id, created_at: 1893456000, consumer: { id: CONSUMER_ID }, key, tags: ['petstore-consumer'], ttl };
}

interface Call {
  method: string;
  path: string;
  body: unknown;
}

async function startKongShapedAdmin(credentials: ReturnType<typeof credential>[]) {
  const calls: Call[] = [];
  const send = (res: ServerResponse, status: number, body?: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const handle = (req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const path = new URL(req.url!, 'http://admin').pathname;
    calls.push({ method: req.method!, path, body });
    const parts = path.split('/').filter(Boolean);
    if (parts[0] !== 'consumers' || (parts[1] !== consumer.id && parts[1] !== consumer.username))
      return send(res, 404, { message: 'Not found' });
    if (parts.length === 2 && req.method === 'GET') return send(res, 200, consumer);
    if (parts[2] === 'plugins' && req.method === 'GET') {
      const plugin = {
        id: '3f0e1a2b-0000-4000-8000-000000000001',
        name: 'rate-limiting',
        instance_name: null,
        created_at: 1893456000,
        updated_at: 1893456000,
        route: null,
        service: null,
        consumer: { id: CONSUMER_ID },
        protocols: ['grpc', 'grpcs', 'http', 'https'],
        enabled: true,
        ordering: null,
        tags: ['petstore-consumer', 'plan:pro'],
        config: { second: null, minute: 300, hour: null, day: 10000, month: null, year: null, limit_by: 'consumer', policy: 'local' },
      };
      return send(res, 200, { data: [plugin], next: null });
    }
    if (parts[2] === 'key-auth' && parts.length === 3 && req.method === 'GET') return send(res, 200, { data: credentials, next: null });
    if (parts[2] === 'key-auth' && parts.length === 3 && req.method === 'POST') {
      const created = credential(`cred-${credentials.length + 1}`, (body as { key: string }).key, null);
      credentials.push(created);
      return send(res, 201, created);
    }
    const target = credentials.find((c) => c.id === parts[3] || c.key === parts[3]);
    if (parts[2] === 'key-auth' && target && req.method === 'PATCH') {
      target.ttl = (body as { ttl?: number }).ttl ?? target.ttl;
      return send(res, 200, target);
    }
    return send(res, 405, { message: 'Method not allowed' });
  };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => handle(req, res, text ? JSON.parse(text) : undefined));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

test('rotate-key gives a key Kong reports as "ttl": null the grace period', async (t) => {
  const credentials = [credential('cred-old', 'ask_old', null)];
  const admin = await startKongShapedAdmin(credentials);
  t.teardown(admin.close);
  const provisioning = new Provisioning(createKongAdminClient({ url: admin.url }), loadCatalogue());

  const issued = await provisioning.rotateKey('kong-shaped', 3600);

  t.is(issued.previousKeys, 1);
  t.deepEqual(
    admin.calls.filter((call) => call.method === 'PATCH'),
    [{ method: 'PATCH', path: `/consumers/${CONSUMER_ID}/key-auth/cred-old`, body: { ttl: 3600 } }],
  );
  t.is(credentials.find((c) => c.id === 'cred-old')!.ttl, 3600);
  t.is(credentials.find((c) => c.key === issued.key)!.ttl, null, 'the new key never expires');
});

test('rotate-key keeps a shorter ttl and shortens a longer one', async (t) => {
  const credentials = [
    credential('cred-soon', 'ask_soon', 60),
    credential('cred-late', 'ask_late', 7200),
    credential('cred-never', 'ask_never', null),
  ];
  const admin = await startKongShapedAdmin(credentials);
  t.teardown(admin.close);
  const provisioning = new Provisioning(createKongAdminClient({ url: admin.url }), loadCatalogue());

  await provisioning.rotateKey('kong-shaped', 3600);

  t.deepEqual(
    admin.calls.filter((call) => call.method === 'PATCH').map((call) => call.path.split('/').pop()),
    ['cred-late', 'cred-never'],
  );
  t.deepEqual(
    credentials.slice(0, 3).map((c) => c.ttl),
    [60, 3600, 3600],
  );
});
