import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { KEY_HASH_TAG, digestApiKey } from '../../packages/provisioning/index.ts';
import { request } from '../helpers/backend.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { deck, startDeckStack, type DeckStack } from '../helpers/deck.ts';
import { pollUntil } from '../helpers/poll.ts';

// Issue 22: what Kong stores is no key. Every `key` the Admin API returns and every key in
// `deck gateway dump` (with and without a select tag), sent as a bearer token, answers 401; the
// keys the CLI printed answer 200. Keys made by the CLI (create, rotate-key with grace) and keys
// an admin stored in clear and `consumers hash-keys` migrated are all covered, with the edge
// plugin's migration aid off and on.

interface Dump {
  consumers?: Array<{ username: string; keyauth_credentials?: Array<{ key: string }> }>;
}

async function dumpedKeys(stack: DeckStack, selectTag: string | null): Promise<string[]> {
  const file = stack.file(`dump-${selectTag ?? 'all'}.yml`);
  await deck(['gateway', 'dump', ...stack.addr, ...(selectTag ? ['--select-tag', selectTag] : []), '-o', file, '--yes'], stack.env);
  const dump = parse(readFileSync(file, 'utf8')) as Dump;
  return (dump.consumers ?? []).flatMap((c) => (c.keyauth_credentials ?? []).map((k) => k.key));
}

async function adminKeys(stack: DeckStack): Promise<string[]> {
  const keys: string[] = [];
  const all = (await stack.admin('/key-auths')).body.data as Array<{ id: string; key: string; consumer: { id: string } }>;
  for (const credential of all) {
    keys.push(credential.key);
    keys.push((await stack.admin(`/key-auths/${credential.id}`)).body.key as string);
    const ofConsumer = (await stack.admin(`/consumers/${credential.consumer.id}/key-auth`)).body.data as Array<{ key: string }>;
    keys.push(...ofConsumer.map((k) => k.key));
  }
  return keys;
}

async function status(stack: DeckStack, key: string): Promise<number> {
  // the data plane runs the store's configuration (a write answers after 1 s at the latest, and a
  // loaded machine can take longer): these tests are about what it does, not how fast it arrives
  await pollUntil('the data plane to run the current configuration', async () =>
    ((await stack.admin('/clustering/data-planes')).body.data as Array<{ sync_status: string }>).every((n) => n.sync_status === 'normal'));
  return (await request(`${stack.gateway.proxyUrl}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })).status;
}

test('no stored key authenticates; the keys the CLI printed do', async (t) => {
  const stack = await startDeckStack('kong.yml');
  t.teardown(() => stack.dispose());
  const cli = async (args: string[]) => {
    const result = await runCliInProcess(args, { KONG_ADMIN_URL: stack.gateway.adminUrl });
    if (result.code !== 0) throw new Error(`consumers ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const printed = (stdout: string) => (JSON.parse(stdout) as { key: string }).key;

  const alice = printed(await cli(['create', '--username', 'hk-alice', '--plan', 'pro', '--json']));
  const aliceRotated = printed(await cli(['rotate-key', 'hk-alice', '--grace', '3600', '--json']));
  const bob = printed(await cli(['create', '--username', 'hk-bob', '--plan', 'free', '--json']));
  // stored in clear by an admin before the migration, then migrated
  await stack.admin('/consumers', { method: 'POST', json: { username: 'hk-carol', tags: ['petstore-consumer', 'plan:free'] } });
  const carolLegacy = `ask_${randomBytes(32).toString('base64url')}`; // as the CLI made them before
  const carolByHand = randomBytes(32).toString('hex'); // `openssl rand -hex 32`: the digest's shape
  t.is((await stack.admin('/consumers/hk-carol/key-auth', { method: 'POST', json: { key: carolLegacy, tags: ['petstore-consumer'] } })).status, 201);
  t.is((await stack.admin('/consumers/hk-carol/key-auth', { method: 'POST', json: { key: carolByHand } })).status, 201);
  await cli(['hash-keys']);
  const issued = [alice, aliceRotated, bob, carolLegacy, carolByHand];

  const stored = {
    'the Admin API': await adminKeys(stack),
    'deck gateway dump': await dumpedKeys(stack, null),
    'deck gateway dump --select-tag petstore-consumer': await dumpedKeys(stack, 'petstore-consumer'),
  };
  const digests = (keys: string[]) => keys.map(digestApiKey).sort();
  t.deepEqual([...new Set(stored['the Admin API'])].sort(), digests(issued), 'the Admin API holds the digests, and only them');
  t.deepEqual([...new Set(stored['deck gateway dump'])].sort(), digests(issued), 'so does a dump of everything');
  // decK selects credentials by their own tags too: the hand-made key had none
  t.deepEqual(
    [...new Set(stored['deck gateway dump --select-tag petstore-consumer'])].sort(),
    digests([alice, aliceRotated, bob, carolLegacy]),
    'a dump of the CLI tag holds the digests of the credentials carrying it',
  );
  const credentials = (await stack.admin('/key-auths')).body.data as Array<{ tags: string[] | null }>;
  t.true(credentials.every((c) => c.tags?.includes(KEY_HASH_TAG)), 'every credential is tagged hashed');

  // the edge plugin is on each of our API's services: kong.yml's one setting is both (the
  // portal's, for https_only, takes no keys: no key-auth runs there)
  const portal = (await stack.admin('/services/animal-store-portal')).body.id as string;
  const edges = ((await stack.admin('/plugins')).body.data as Array<{ id: string; name: string; service: { id: string } | null }>).filter(
    (p) => p.name === 'animal-store-edge' && p.service?.id !== portal,
  );
  t.is(edges.length, 2);
  for (const acceptPlaintext of [false, true]) {
    for (const edge of edges) {
      const patched = await stack.admin(`/plugins/${edge.id}`, { method: 'PATCH', json: { config: { accept_plaintext_keys: acceptPlaintext } } });
      t.is(patched.status, 200);
    }
    const mode = `accept_plaintext_keys ${acceptPlaintext}`;
    for (const [source, keys] of Object.entries(stored)) {
      for (const key of new Set(keys)) t.is(await status(stack, key), 401, `${mode}: a key from ${source}`);
    }
    for (const key of issued) t.is(await status(stack, key), 200, `${mode}: a key the CLI printed or an admin made`);
  }
});
