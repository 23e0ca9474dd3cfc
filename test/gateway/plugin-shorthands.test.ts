import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { startTestGateway, writeConfig } from '../helpers/gateway.ts';

// rate-limiting's deprecated config.redis_* shorthands (kong/plugins/rate-limiting/schema.lua:101-194,
// Kong 3.9.3): served in the schema with deprecation.replaced_with, which go-kong and decK read to
// align diffs, and accepted on writes as Kong's process_auto_fields does (kong/db/schema/init.lua:1798-1844).

const gatewayFor = async (t: import('ava').ExecutionContext) => {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-shorthands-'));
  const gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir });
  t.teardown(async () => {
    await gateway.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  return gateway;
};

test.serial('rate-limiting schema carries shorthand_fields with replaced_with; writes move them under config.redis', async (t) => {
  const gateway = await gatewayFor(t);
  const schema = await request(`${gateway.adminUrl}/schemas/plugins/rate-limiting`);
  t.is(schema.status, 200);
  const config = (schema.body as { fields: Array<Record<string, Record<string, unknown>>> }).fields.find((f) => f.config)!.config!;
  const shorthands = config.shorthand_fields as Array<Record<string, Record<string, unknown>>>;
  t.deepEqual(
    shorthands.map((entry) => Object.keys(entry)[0]),
    ['redis_host', 'redis_port', 'redis_password', 'redis_username', 'redis_ssl', 'redis_ssl_verify', 'redis_server_name', 'redis_timeout', 'redis_database'],
  );
  t.deepEqual(shorthands[0], {
    redis_host: {
      type: 'string',
      deprecation: {
        replaced_with: [{ path: ['redis', 'host'] }],
        message: 'rate-limiting: config.redis_host is deprecated, please use config.redis.host instead',
        removal_in_version: '4.0',
      },
    },
  });
  t.deepEqual(shorthands[2]!.redis_password, {
    type: 'string',
    len_min: 0,
    deprecation: {
      replaced_with: [{ path: ['redis', 'password'] }],
      message: 'rate-limiting: config.redis_password is deprecated, please use config.redis.password instead',
      removal_in_version: '4.0',
    },
  });

  const created = await request(`${gateway.adminUrl}/plugins`, {
    method: 'POST',
    json: { name: 'rate-limiting', config: { minute: 10, policy: 'redis', redis_host: 'redis.internal', redis_port: 6380, redis: { timeout: 500 } } },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const redis = (created.body as { config: { redis: Record<string, unknown> } }).config.redis;
  t.like(redis, { host: 'redis.internal', port: 6380, timeout: 500, database: 0 });

  // A value at the new path agrees with the shorthand, or the write is refused (init.lua:1745-1770).
  const same = await request(`${gateway.adminUrl}/schemas/plugins/validate`, {
    method: 'POST',
    json: { name: 'rate-limiting', config: { minute: 10, redis_host: 'a.example', redis: { host: 'a.example' } } },
  });
  t.is(same.status, 200, JSON.stringify(same.body));
  const mismatch = await request(`${gateway.adminUrl}/schemas/plugins/validate`, {
    method: 'POST',
    json: { name: 'rate-limiting', config: { minute: 10, redis_host: 'a.example', redis: { host: 'b.example' } } },
  });
  t.is(mismatch.status, 400);
  t.regex(JSON.stringify(mismatch.body), /both deprecated and new field are used but their values mismatch: redis_host = a\.example vs redis\.host = b\.example/);
  const wrongType = await request(`${gateway.adminUrl}/schemas/plugins/validate`, {
    method: 'POST',
    json: { name: 'rate-limiting', config: { minute: 10, redis_port: 'six' } },
  });
  t.is(wrongType.status, 400);
  t.regex(JSON.stringify(wrongType.body), /redis_port.*expected an integer/);
});

test.serial("rate-limiting's answers carry the redis_* shorthands mirrored from config.redis; a PATCH's shorthands are expanded before the merge", async (t) => {
  const gateway = await gatewayFor(t);
  // spec/03-plugins/23-rate-limiting/06-shorthand_fields_spec.lua:66-136 (kong/db/schema/init.lua:1845-1855:
  // a select mirrors each shorthand from its replaced_with path unless hide_shorthands)
  const legacy = {
    minute: 100,
    policy: 'redis',
    redis_host: 'custom-host.example.test',
    redis_port: 55000,
    redis_username: 'test1',
    redis_password: 'testX',
    redis_database: 1,
    redis_timeout: 1100,
    redis_ssl: true,
    redis_ssl_verify: true,
    redis_server_name: 'example.test',
  };
  const mirrored = (config: Record<string, unknown>) => {
    const redis = config.redis as Record<string, unknown>;
    return Object.fromEntries(['host', 'port', 'username', 'password', 'database', 'timeout', 'ssl', 'ssl_verify', 'server_name'].map((name) => [name, [redis[name], config[`redis_${name}`]]]));
  };
  const expected = (host: string) => ({
    host: [host, host],
    port: [55000, 55000],
    username: ['test1', 'test1'],
    password: ['testX', 'testX'],
    database: [1, 1],
    timeout: [1100, 1100],
    ssl: [true, true],
    ssl_verify: [true, true],
    server_name: ['example.test', 'example.test'],
  });
  const created = await request(`${gateway.adminUrl}/plugins`, { method: 'POST', json: { name: 'rate-limiting', config: legacy } });
  t.is(created.status, 201, JSON.stringify(created.body));
  t.deepEqual(mirrored(created.body.config), expected('custom-host.example.test'));

  // the PATCH's redis_host replaces the stored redis.host (06-shorthand_fields_spec.lua:101-118; kong/db/dao/init.lua:506-537)
  const patched = await request(`${gateway.adminUrl}/plugins/${created.body.id}`, {
    method: 'PATCH',
    json: { name: 'rate-limiting', config: { redis_host: 'testhost' } },
  });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  t.deepEqual(mirrored(patched.body.config), expected('testhost'));
  t.deepEqual(mirrored((await request(`${gateway.adminUrl}/plugins/${created.body.id}`)).body.config), expected('testhost'));
  t.deepEqual(mirrored((await request(`${gateway.adminUrl}/plugins`)).body.data[0].config), expected('testhost'));
  // the answer as a body: the shorthands agree with config.redis, so a PUT of it is taken
  const put = await request(`${gateway.adminUrl}/plugins/${created.body.id}`, { method: 'PUT', json: patched.body });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.deepEqual(mirrored(put.body.config), expected('testhost'));

  t.is((await request(`${gateway.adminUrl}/plugins/${created.body.id}`, { method: 'DELETE' })).status, 204);
  const local = await request(`${gateway.adminUrl}/plugins`, { method: 'POST', json: { name: 'rate-limiting', config: { second: 5 } } });
  t.is(local.status, 201, JSON.stringify(local.body));
  t.like(local.body.config, { redis_host: null, redis_port: 6379, redis_timeout: 2000, redis_ssl: false, redis_database: 0 });
});
