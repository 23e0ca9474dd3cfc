import test, { type ExecutionContext } from 'ava';
import { KEY_HASH_TAG, classifyApiKey, digestApiKey, keyFingerprint } from '../../scripts/lib/api-keys.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { startKongShapedAdmin, type KongShapedAdmin } from './kong-shaped-admin.ts';

// Keys stored as their SHA-256 digest (issue 22), the CLI's side, against an Admin API that
// answers as Kong 3.9 does (kong-shaped-admin.ts) and records every request it is sent.

const HASHED_TAGS = ['petstore-consumer', KEY_HASH_TAG];

async function start(t: ExecutionContext) {
  const admin = await startKongShapedAdmin();
  t.teardown(admin.close);
  const cli = async (...args: string[]) => runCliInProcess(args, { KONG_ADMIN_URL: admin.url });
  /** `create --json`: the printed key and the consumer's id. */
  const create = async (username: string) => {
    const result = await cli('create', '--username', username, '--plan', 'free', '--json');
    if (result.code !== 0) throw new Error(result.stderr);
    return JSON.parse(result.stdout) as { key: string; fingerprint: string; consumerId: string };
  };
  return { admin, cli, create };
}

/** Every request the Admin API was sent, as one string of methods, URLs and bodies. */
const sent = (admin: KongShapedAdmin) => admin.requests.map((r) => `${r.method} ${r.url} ${r.body}`).join('\n');
const ttlOf = (admin: KongShapedAdmin, credential: { expiresAt: number | null }) =>
  credential.expiresAt === null ? null : Math.floor(credential.expiresAt - admin.now());

test('create: Kong receives only the digest, tagged; the printed key passes its checksum', async (t) => {
  const { admin, cli } = await start(t);
  const result = await cli('create', '--username', 'hk-create', '--plan', 'free');
  t.is(result.code, 0, result.stderr);
  const [created, keyLine, fingerprintLine, end] = result.stdout.split('\n');
  t.is(created, 'created hk-create on plan free (60/min, 1000/day)');
  t.regex(keyLine!, /^API key \(shown once, store it now\): ask_/);
  const key = keyLine!.split(': ')[1]!;
  t.is(classifyApiKey(key), 'checksummed');
  t.is(fingerprintLine, `key fingerprint: ${keyFingerprint(digestApiKey(key))} (how show names this key)`);
  t.is(end, '');
  t.false(sent(admin).includes(key), 'the key never reaches the Admin API');
  const [credential, ...others] = admin.credentials(admin.consumerId('hk-create'));
  t.deepEqual(others, []);
  t.is(credential!.key, digestApiKey(key));
  t.deepEqual(credential!.tags, HASHED_TAGS);
  t.is(credential!.expiresAt, null);
});

test('rotate-key with grace: the new key hashed, the old one lives out the grace, then only the new one', async (t) => {
  const { admin, cli, create } = await start(t);
  const first = await create('hk-rotate');
  const rotated = await cli('rotate-key', 'hk-rotate', '--grace', '600', '--json');
  t.is(rotated.code, 0, rotated.stderr);
  const second = JSON.parse(rotated.stdout) as { key: string; fingerprint: string; previousKeys: number };
  t.is(classifyApiKey(second.key), 'checksummed');
  t.is(second.fingerprint, keyFingerprint(digestApiKey(second.key)));
  t.is(second.previousKeys, 1);
  for (const key of [first.key, second.key]) t.false(sent(admin).includes(key));
  const byKey = () => new Map(admin.credentials(first.consumerId).map((c) => [c.key, c]));
  t.is(ttlOf(admin, byKey().get(digestApiKey(first.key))!), 600);
  t.is(ttlOf(admin, byKey().get(digestApiKey(second.key))!), null);
  t.deepEqual(byKey().get(digestApiKey(second.key))!.tags, HASHED_TAGS);
  admin.advance(601);
  t.deepEqual([...byKey().keys()], [digestApiKey(second.key)]);

  const text = await cli('rotate-key', 'hk-rotate', '--grace', '0');
  const [keyLine, fingerprintLine, previous] = text.stdout.trimEnd().split('\n');
  const third = keyLine!.split(': ')[1]!;
  t.is(fingerprintLine, `key fingerprint: ${keyFingerprint(digestApiKey(third))} (how show names this key)`);
  t.is(previous, '1 previous key(s) revoked now');
  t.deepEqual([...byKey().keys()], [digestApiKey(third)]);
});

test('set-plan leaves the hashed keys alone; revoke-key and delete remove them', async (t) => {
  const { admin, cli, create } = await start(t);
  const issued = await create('hk-life');
  const before = admin.credentials(issued.consumerId);
  t.is((await cli('set-plan', 'hk-life', '--plan', 'pro')).code, 0);
  t.deepEqual(admin.credentials(issued.consumerId), before);
  t.is((await cli('revoke-key', 'hk-life')).stdout, 'revoked 1 key(s) of hk-life\n');
  t.deepEqual(admin.credentials(issued.consumerId), []);
  await cli('rotate-key', 'hk-life');
  t.is((await cli('delete', 'hk-life')).code, 0);
  t.deepEqual(admin.credentials(issued.consumerId), []);
  t.false(sent(admin).includes(issued.key));
});

test('show and list print a fingerprint, never a key nor a digest', async (t) => {
  const { admin, cli, create } = await start(t);
  const issued = await create('hk-show');
  const plaintext = admin.addCredential(issued.consumerId, 'made-by-hand', { tags: ['petstore-consumer'], ttl: 90 });
  const stored = admin.credentials(issued.consumerId).map((c) => c.key);
  const secrets = [issued.key, 'made-by-hand', digestApiKey(issued.key), digestApiKey('made-by-hand'), ...stored];
  const outputs = [
    await cli('show', 'hk-show'),
    await cli('show', 'hk-show', '--json'),
    await cli('list'),
    await cli('list', '--json'),
  ];
  for (const output of outputs) {
    t.is(output.code, 0, output.stderr);
    for (const secret of secrets) t.false(output.stdout.includes(secret) || output.stderr.includes(secret), secret);
  }
  const lines = outputs[0]!.stdout.split('\n').filter((line) => line.startsWith('  key'));
  const hashedId = admin.credentials(issued.consumerId).find((c) => c.id !== plaintext.id)!.id;
  t.true(lines.includes(`  key      ${hashedId} created 2030-01-01T00:00:00.000Z, fingerprint ${issued.fingerprint}`), lines.join('\n'));
  t.true(
    lines.includes(
      `  key      ${plaintext.id} created 2030-01-01T00:00:00.000Z, fingerprint ${keyFingerprint(digestApiKey('made-by-hand'))}, expires in 90s, stored in clear`,
    ),
    lines.join('\n'),
  );
  const json = JSON.parse(outputs[1]!.stdout) as { keys: Array<{ id: string; fingerprint: string; stored: string }> };
  t.deepEqual(
    json.keys.map((k) => [k.id, k.fingerprint, k.stored]).sort(),
    [
      [hashedId, issued.fingerprint, 'sha256'],
      [plaintext.id, keyFingerprint(digestApiKey('made-by-hand')), 'plaintext'],
    ].sort(),
  );
});
