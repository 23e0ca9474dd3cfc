import test from 'ava';
import { Provisioning, digestApiKey, loadCatalogue } from '../../packages/provisioning/index.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { startKongShapedAdmin } from './kong-shaped-admin.ts';

// rotate-key against entities shaped as Kong 3.9 returns them. Kong's Admin API reads every
// entity with `nulls = true` (kong/api/endpoints.lua, extract_options), so a field that is not
// set comes back as JSON null; for key-auth credentials (kong/plugins/key-auth/daos.lua,
// `ttl = true`) a key that never expires answers `"ttl": null`. The double (kong-shaped-admin.ts)
// answers in that shape, whatever the local gateway does.

async function kongShaped(t: { teardown: (fn: () => Promise<void>) => void }, keys: Array<[id: string, key: string, ttl?: number]>) {
  const admin = await startKongShapedAdmin();
  t.teardown(admin.close);
  const consumer = admin.addConsumer('kong-shaped', ['petstore-consumer', 'plan:pro']);
  for (const [id, key, ttl] of keys) admin.addCredential(consumer.id, key, { id, tags: ['petstore-consumer'], ttl });
  const provisioning = Provisioning.connect({ url: admin.url }, loadCatalogue());
  const ttl = (expiresAt: number | null) => (expiresAt === null ? null : expiresAt - admin.now());
  const ttls = () => Object.fromEntries(admin.credentials(consumer.id).map((c) => [c.id, ttl(c.expiresAt)]));
  const patched = () => admin.requests.filter((r) => r.method === 'PATCH').map((r) => [r.url, JSON.parse(r.body) as unknown]);
  return { admin, consumer, provisioning, ttls, patched };
}

test('rotate-key gives a key Kong reports as "ttl": null the grace period', async (t) => {
  const { admin, consumer, provisioning, ttls, patched } = await kongShaped(t, [['cred-old', 'ask_old']]);

  const issued = await provisioning.rotateKey('kong-shaped', { graceSeconds: 3600 });

  t.is(issued.previousKeys, 1);
  // tagged replaced as well, so that list --expiring and the next rotation know it (key-tags.ts)
  t.deepEqual(patched(), [[`/consumers/${consumer.id}/key-auth/cred-old`, { ttl: 3600, tags: ['petstore-consumer', 'replaced'] }]]);
  t.is(ttls()['cred-old'], 3600);
  const created = admin.credentials(consumer.id).find((c) => c.key === digestApiKey(issued.key));
  t.is(created?.expiresAt, null, 'the new key never expires');
});

test('rotate-key keeps a shorter ttl and shortens a longer one', async (t) => {
  const { provisioning, ttls, patched } = await kongShaped(t, [
    ['cred-soon', 'ask_soon', 60],
    ['cred-late', 'ask_late', 7200],
    ['cred-never', 'ask_never'],
  ]);

  await provisioning.rotateKey('kong-shaped', { graceSeconds: 3600 });

  t.deepEqual(
    patched().map(([url, body]) => [(url as string).split('/').pop(), 'ttl' in (body as object)]),
    [
      ['cred-soon', false],
      ['cred-late', true],
      ['cred-never', true],
    ],
  );
  t.like(ttls(), { 'cred-soon': 60, 'cred-late': 3600, 'cred-never': 3600 });
});

test("rotate-key of a key in its last second (Kong's \"ttl\": 0) is refused, not given a key that never expires", async (t) => {
  const { admin, consumer } = await kongShaped(t, [['cred-last', 'ask_last', 3]]);
  admin.advance(2.5);
  const listed = (await (await fetch(`${admin.url}/consumers/kong-shaped/key-auth`)).json()) as { data: Array<{ ttl: number | null }> };
  t.deepEqual(listed.data.map((c) => c.ttl), [0], 'half a second left: Kong reports 0');
  const cli = (...args: string[]) => runCliInProcess(args, { KONG_ADMIN_URL: admin.url });
  const writes = () => admin.requests.filter((r) => r.method !== 'GET').length;

  const refused = await cli('rotate-key', 'kong-shaped', '--grace', '60', '--json');
  t.is(refused.code, 2);
  t.is(refused.stderr, 'error: the key default has less than a second left: give the new key an expiry of its own (see rotate-key --help)\n');
  t.is(refused.stdout, '');
  t.is(writes(), 0, 'nothing written');

  const renewed = await cli('rotate-key', 'kong-shaped', '--grace', '60', '--expires-in', '1h', '--json');
  t.is(renewed.code, 0, renewed.stderr);
  const created = admin.credentials(consumer.id).find((c) => c.key === digestApiKey(JSON.parse(renewed.stdout).key as string));
  t.not(created?.expiresAt, null, 'the new key expires');
});
