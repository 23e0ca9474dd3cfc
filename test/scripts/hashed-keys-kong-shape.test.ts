import test, { type ExecutionContext } from 'ava';
import { KEY_HASH_TAG, classifyApiKey, digestApiKey, generateApiKey, keyFingerprint } from '../../packages/provisioning/index.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { startKongShapedAdmin, type KongShapedAdmin } from './kong-shaped-admin.ts';

// Keys stored as their SHA-256 digest (issue 22), the CLI's side, against an Admin API that
// answers as Kong 3.9 does (kong-shaped-admin.ts) and records every request it is sent.

const MANAGED = ['petstore-consumer', 'plan:free'];
const HASHED_TAGS = ['petstore-consumer', 'name:default', KEY_HASH_TAG];

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
/** The requests that change something, as "METHOD path". */
const writes = (admin: KongShapedAdmin) => admin.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.url}`);
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
  const created = 'created 2030-01-01T00:00:00.000Z';
  t.true(lines.includes(`  key      default fingerprint ${issued.fingerprint}, scopes all, expires never, ${created}, id ${hashedId}`), lines.join('\n'));
  // the instant is the CLI's clock plus Kong's ttl
  const clear = new RegExp(
    `^  key      default fingerprint ${keyFingerprint(digestApiKey('made-by-hand'))}, scopes all, expires in 1m 30s \\(\\S+Z\\), ` +
      `${created}, id ${plaintext.id}, stored in clear \\(run hash-keys\\)$`,
  );
  t.true(lines.some((line) => clear.test(line)), lines.join('\n'));
  const json = JSON.parse(outputs[1]!.stdout) as { keys: Array<{ id: string; fingerprint: string; stored: string }> };
  t.deepEqual(
    json.keys.map((k) => [k.id, k.fingerprint, k.stored]).sort(),
    [
      [hashedId, issued.fingerprint, 'sha256'],
      [plaintext.id, keyFingerprint(digestApiKey('made-by-hand')), 'plaintext'],
    ].sort(),
  );
});

/** A consumer with plaintext credentials of every kind, as keys were stored before issue 22. */
function legacyConsumer(admin: KongShapedAdmin, username: string, tags = MANAGED) {
  const consumer = admin.addConsumer(username, tags);
  const legacy = `ask_${'L'.repeat(43)}`;
  const checksummed = generateApiKey();
  const hex = 'c9616cb59d02c9ee41e1bd3f02c60ee7ca83b44ecf5719ced43f1a14e0394fa1';
  admin.addCredential(consumer.id, legacy, { tags: ['petstore-consumer'] });
  admin.addCredential(consumer.id, checksummed, { tags: ['petstore-consumer', 'team:blue'], ttl: 500 });
  admin.addCredential(consumer.id, hex, { tags: null });
  admin.addCredential(consumer.id, 'by hand', { tags: ['petstore-consumer'], ttl: 3600 });
  return { id: consumer.id, plaintext: [legacy, checksummed, hex, 'by hand'] };
}

test('hash-keys --dry-run: says what it would hash, on stderr, and changes nothing', async (t) => {
  const { admin, cli } = await start(t);
  const consumer = legacyConsumer(admin, 'hk-dry');
  const before = admin.credentials(consumer.id);
  const result = await cli('hash-keys', '--dry-run');
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, 'would hash 4 key(s) of 1 consumer(s); 0 already hashed; nothing changed (--dry-run)\n');
  t.deepEqual(
    result.stderr.trimEnd().split('\n'),
    before.map((c, i) => `would hash key ${c.id} of hk-dry (#${i + 1})`),
  );
  t.deepEqual(writes(admin), []);
  t.deepEqual(admin.credentials(consumer.id), before);
});

test('hash-keys replaces each plaintext key with its digest, same tags plus the marker, same time left', async (t) => {
  const { admin, cli, create } = await start(t);
  const consumer = legacyConsumer(admin, 'hk-migrate');
  const hashedAlready = await create('hk-new');
  const hashedBefore = admin.credentials(hashedAlready.consumerId);
  const other = legacyConsumer(admin, 'hk-other-team', ['other-team']);
  const otherBefore = admin.credentials(other.id);
  const plaintextIds = admin.credentials(consumer.id).map((c) => c.id);
  admin.advance(100);
  admin.requests.length = 0;

  const result = await cli('hash-keys');
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, 'hashed 4 key(s) of 2 consumer(s); 1 already hashed\n');
  t.deepEqual(
    result.stderr.trimEnd().split('\n'),
    plaintextIds.map((id, i) => `hashed key ${id} of hk-migrate (#${i + 1})`),
  );
  const after = new Map(admin.credentials(consumer.id).map((c) => [c.key, c]));
  t.deepEqual([...after.keys()].sort(), consumer.plaintext.map(digestApiKey).sort(), 'each digest of exactly the stored key');
  const [legacy, checksummed, hex, byHand] = consumer.plaintext.map((key) => after.get(digestApiKey(key))!);
  t.deepEqual(legacy!.tags, ['petstore-consumer', KEY_HASH_TAG]);
  t.deepEqual(checksummed!.tags, ['petstore-consumer', 'team:blue', KEY_HASH_TAG]);
  t.deepEqual(hex!.tags, [KEY_HASH_TAG], 'a 64-hex key made by hand is hashed as well: the tag, not the shape, says hashed');
  t.deepEqual(byHand!.tags, ['petstore-consumer', KEY_HASH_TAG]);
  t.deepEqual([legacy, checksummed, hex, byHand].map((c) => ttlOf(admin, c!)), [null, 400, null, 3500]);
  // The consumer made before the ACL group existed joins it (hk-new, made by create, is in it);
  // per credential, the hashed one is created before the plaintext one is deleted.
  const path = `/consumers/${consumer.id}/key-auth`;
  t.deepEqual(writes(admin), [
    `PUT /consumers/${consumer.id}/acls/animal-store`,
    ...plaintextIds.flatMap((id) => [`POST ${path}`, `DELETE ${path}/${id}`]),
  ]);
  for (const key of consumer.plaintext) {
    t.false(admin.requests.filter((r) => r.method !== 'GET').some((r) => r.url.includes(key) || r.body.includes(`"${key}"`)), key);
  }
  t.deepEqual(admin.credentials(hashedAlready.consumerId), hashedBefore, 'hashed credentials are left alone');
  t.deepEqual(admin.credentials(other.id), otherBefore, "another team's consumer is left alone");

  // ttl expiry works on the hashed copies as it did on the keys.
  admin.advance(400);
  t.deepEqual(
    admin.credentials(consumer.id).map((c) => c.key).sort(),
    [legacy!.key, hex!.key, byHand!.key].sort(),
  );

  admin.requests.length = 0;
  const again = await cli('hash-keys');
  t.is(again.stdout, 'hashed 0 key(s) of 2 consumer(s); 4 already hashed\n', 'idempotent');
  t.is(again.stderr, '');
  t.deepEqual(writes(admin), []);
});

test('hash-keys gives a key in its last second a ttl of 1, not 0 (which Kong reads as never expiring)', async (t) => {
  const { admin, cli } = await start(t);
  const consumer = admin.addConsumer('hk-last-second', MANAGED);
  admin.addCredential(consumer.id, 'ask_expiring', { ttl: 0.5 });
  t.is(ttlOf(admin, admin.credentials(consumer.id)[0]!), 0, 'Kong reads FLOOR of the time left');
  t.is((await cli('hash-keys')).code, 0);
  const [hashed] = admin.credentials(consumer.id);
  t.is(hashed!.key, digestApiKey('ask_expiring'));
  t.is(ttlOf(admin, hashed!), 1);
  admin.advance(1);
  t.deepEqual(admin.credentials(consumer.id), []);
});

test('hash-keys is all-or-nothing per credential, and a second run finishes the job', async (t) => {
  const { admin, cli } = await start(t);
  const consumer = admin.addConsumer('hk-fail', MANAGED);
  const first = admin.addCredential(consumer.id, 'ask_first', { tags: ['petstore-consumer'] });
  const second = admin.addCredential(consumer.id, 'ask_second', { tags: ['petstore-consumer'] });

  admin.failNext('DELETE', new RegExp(`/key-auth/${second.id}$`));
  const failed = await cli('hash-keys');
  t.is(failed.code, 1);
  t.is(failed.stderr, `hashed key ${first.id} of hk-fail (#1)\nerror: deleting the plaintext key ${second.id} of hk-fail: Kong answered 500: injected failure\n`);
  t.deepEqual(
    admin.credentials(consumer.id).map((c) => c.key).sort(),
    [digestApiKey('ask_first'), 'ask_second'].sort(),
    'the first is hashed; the hashed copy of the second was removed again',
  );

  admin.failNext('POST', /\/key-auth$/);
  const refused = await cli('hash-keys');
  t.is(refused.code, 1);
  t.is(refused.stderr, `error: hashing key ${second.id} of hk-fail: Kong answered 500: its message is not shown, it may hold the key\n`);
  t.deepEqual(admin.credentials(consumer.id).map((c) => c.key).sort(), [digestApiKey('ask_first'), 'ask_second'].sort());

  const finished = await cli('hash-keys');
  t.is(finished.code, 0, finished.stderr);
  t.deepEqual(admin.credentials(consumer.id).map((c) => c.key).sort(), [digestApiKey('ask_first'), digestApiKey('ask_second')].sort());
});

test('hash-keys finishes a run cut short between its two steps: only the plaintext key is deleted', async (t) => {
  const { admin, cli } = await start(t);
  const consumer = admin.addConsumer('hk-resume', MANAGED);
  const plaintext = admin.addCredential(consumer.id, 'ask_resume', { tags: ['petstore-consumer'] });
  const twin = admin.addCredential(consumer.id, digestApiKey('ask_resume'), { tags: HASHED_TAGS });
  admin.requests.length = 0;
  const result = await cli('hash-keys');
  t.is(result.stdout, 'hashed 1 key(s) of 1 consumer(s); 1 already hashed\n');
  // (and the consumer, made by hand, joins our ACL group)
  t.deepEqual(writes(admin), [`PUT /consumers/${consumer.id}/acls/animal-store`, `DELETE /consumers/${consumer.id}/key-auth/${plaintext.id}`]);
  t.deepEqual(admin.credentials(consumer.id), [twin]);
});

test("a key Kong refuses as a duplicate is not echoed from Kong's answer", async (t) => {
  const { admin, cli } = await start(t);
  const consumer = admin.addConsumer('hk-duplicate', MANAGED);
  admin.addCredential(consumer.id, 'ask_taken', { tags: ['petstore-consumer'] });
  const elsewhere = admin.addConsumer('hk-elsewhere', ['other-team']);
  admin.addCredential(elsewhere.id, digestApiKey('ask_taken'), { tags: [KEY_HASH_TAG] });
  const result = await cli('hash-keys');
  t.is(result.code, 1);
  t.regex(result.stderr, /^error: hashing key \S+ of hk-duplicate: Kong answered 409: unique constraint violation\n$/);
  t.false(result.stderr.includes(digestApiKey('ask_taken')));
});
