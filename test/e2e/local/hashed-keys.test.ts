import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import ava from 'ava';
import { KEY_HASH_TAG, digestApiKey, generateApiKey, storedCredential, type ApiKeyClass } from '../../../packages/provisioning/index.ts';
import { runCliInProcess } from '../../helpers/cli.ts';
import { startEchoUpstream, type EchoUpstream } from '../../helpers/gateway.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { startStack, type TestStack } from '../../helpers/stack.ts';

// Issue 22 on the local data plane (nginx + ngx_lua running the edge plugin unchanged): the
// checksum of ask_ keys with the CLI's test vectors, the refusal the gateway logs (before any
// hash or look-up), and the migration of keys stored in clear with accept_plaintext_keys.
// The upstream echoes, so each request shows which credential key-auth found
// (X-Credential-Identifier, kong/plugins/key-auth/handler.lua set_consumer).
const test = ava.serial;
let stack: TestStack;
let upstream: EchoUpstream;

interface Vector {
  token: string;
  class: ApiKeyClass;
  why: string;
  digest?: string;
}
const VECTORS = (JSON.parse(readFileSync(new URL('../../fixtures/api-key-vectors.json', import.meta.url), 'utf8')) as { vectors: Vector[] }).vectors;

const REFUSAL = 'malformed API key refused before any look-up';

test.before(async () => {
  upstream = await startEchoUpstream();
  stack = await startStack({ upstreamUrl: upstream.url });
});
test.after.always(async () => {
  await stack?.dispose();
  await upstream?.close();
});
/** Each test starts with it: the anonymous consumer allows 30 keyless requests a minute per IP. */
async function freshMinute(): Promise<void> {
  await stack.clock.advance(60_000);
}

function refusals(stack: TestStack): string[] {
  return stack.gateway.logs.filter((line) => line.includes(REFUSAL));
}

/**
 * Waits until the data plane runs the store's configuration (GET /clustering/data-planes). An
 * Admin API write answers once the node runs it, or after 1 s: on a loaded machine the node can
 * take longer, and these tests are about what the configuration does, not how fast it arrives.
 */
async function synced(stack: TestStack): Promise<void> {
  await pollUntil('the data plane to run the current configuration', async () =>
    ((await stack.admin('/clustering/data-planes')).body.data as Array<{ sync_status: string }>).every((n) => n.sync_status === 'normal'));
}

/** The request's status and, when it reached the upstream, the credential key-auth found. */
async function authenticate(key: string) {
  await synced(stack);
  const before = upstream.last();
  const response = await stack.call('/v1/pets', { key });
  const last = upstream.last();
  const credential = last !== before ? (last?.headers['x-credential-identifier'] as string | undefined) : undefined;
  if (last !== before && JSON.stringify(last?.headers).includes(key)) throw new Error('the upstream saw the key');
  if (last !== before && (last?.headers.authorization || last?.headers.apikey)) throw new Error("the upstream saw Authorization or key-auth's header");
  return { status: response.status, code: response.body?.code as string | undefined, credential };
}

async function createConsumer(stack: TestStack, username: string): Promise<void> {
  const created = await stack.admin('/consumers', { method: 'POST', json: { username, tags: ['petstore-consumer', 'plan:free'] } });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  // in our ACL group, as the CLI puts every consumer (kong.yml's animal-store-access)
  const group = await stack.admin(`/consumers/${username}/acls/animal-store`, { method: 'PUT', json: {} });
  if (group.status !== 200) throw new Error(JSON.stringify(group.body));
}

async function createCredential(stack: TestStack, username: string, json: Record<string, unknown>): Promise<string> {
  const created = await stack.admin(`/consumers/${username}/key-auth`, { method: 'POST', json });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  return created.body.id as string;
}

/** On the edge plugin of each of our API's services, as kong.yml's one setting does (the portal's takes no keys). */
async function setAcceptPlaintext(stack: TestStack, on: boolean): Promise<void> {
  const portal = (await stack.admin('/services/animal-store-portal')).body.id as string;
  const edges = ((await stack.admin('/plugins')).body.data as Array<{ id: string; name: string; service: { id: string } | null }>).filter(
    (p) => p.name === 'animal-store-edge' && p.service?.id !== portal,
  );
  if (edges.length !== 2) throw new Error(`expected the edge plugin on our API's two services, found ${edges.length}`);
  for (const edge of edges) {
    const patched = await stack.admin(`/plugins/${edge.id}`, { method: 'PATCH', json: { config: { accept_plaintext_keys: on } } });
    if (patched.status !== 200) throw new Error(JSON.stringify(patched.body));
  }
}

test('every test vector: the checksummed, legacy and unprefixed ones authenticate by digest, malformed ones are refused and logged', async (t) => {
  await freshMinute();
  await createConsumer(stack, 'hk-vectors');
  const credentialOf = new Map<string, string>();
  for (const v of VECTORS.filter((v) => v.class !== 'malformed')) {
    credentialOf.set(v.token, await createCredential(stack, 'hk-vectors', storedCredential(v.token, [])));
  }
  const logged = refusals(stack).length;
  // RFC 6750's b64token: "=" only at the end; a token with one inside is no bearer token at all
  const bearerSyntax = (token: string) => /^[A-Za-z0-9\-._~+/]+=*$/.test(token);
  let refused = 0;
  for (const v of VECTORS) {
    const what = `${v.class} ${v.token} (${v.why})`;
    const result = await authenticate(v.token);
    if (v.class === 'malformed') {
      t.is(result.status, 401, what);
      t.is(result.code, bearerSyntax(v.token) ? 'invalid_api_key' : 'missing_api_key', what);
      if (bearerSyntax(v.token)) refused++;
    } else {
      t.is(result.status, 200, what);
      t.is(result.credential, credentialOf.get(v.token), what);
    }
  }
  t.true(refused >= 20);
  await pollUntil(`${refused} refusals in the error log`, async () => refusals(stack).length >= logged + refused);
  t.is(refusals(stack).length, logged + refused, 'one refusal line per malformed bearer token');
  for (const v of VECTORS.filter((v) => v.token !== 'ask_')) {
    t.false(stack.gateway.logs.some((line) => line.includes(v.token)), `no log line quotes ${v.token}`);
    if (v.digest) t.false(stack.gateway.logs.some((line) => line.includes(v.digest!)), `no log line quotes the digest of ${v.token}`);
  }
});

test('a one-character change in a key the CLI printed: 401, refused before any look-up (the log line says so)', async (t) => {
  await freshMinute();
  const created = await runCliInProcess(['create', '--username', 'hk-typo', '--plan', 'free', '--json'], { KONG_ADMIN_URL: stack.gateway.adminUrl });
  t.is(created.code, 0, created.stderr);
  const key = (JSON.parse(created.stdout) as { key: string }).key;
  t.is((await authenticate(key)).status, 200);

  for (const i of [4, 30, 46, 47, 52]) {
    const changed = key.slice(0, i) + (key[i] === 'x' ? 'y' : 'x') + key.slice(i + 1);
    const logged = refusals(stack).length;
    const result = await authenticate(changed);
    t.is(result.status, 401, `character ${i}`);
    t.is(result.code, 'invalid_api_key', `character ${i}`);
    await pollUntil('the refusal in the error log', async () => refusals(stack).length > logged);
    t.is(refusals(stack).length, logged + 1, `one refusal line for character ${i}`);
  }
  t.false(stack.gateway.logs.some((line) => line.includes(key.slice(4, 40))), 'no log line quotes the key');
});

test('migration: keys stored in clear work with accept_plaintext_keys, and after hash-keys as hashed ones', async (t) => {
  await freshMinute();
  await createConsumer(stack, 'hk-migrating');
  const legacy = `ask_${randomBytes(32).toString('base64url')}`; // as the CLI made them before the checksum
  const byHand = randomBytes(32).toString('hex'); // `openssl rand -hex 32`: the digest's shape
  const hashed = generateApiKey();
  const plainIds = {
    legacy: await createCredential(stack, 'hk-migrating', { key: legacy, tags: ['petstore-consumer'] }),
    byHand: await createCredential(stack, 'hk-migrating', { key: byHand }),
  };
  const hashedId = await createCredential(stack, 'hk-migrating', storedCredential(hashed, ['petstore-consumer']));

  // off (the default): a credential stored in clear is unreachable, a hashed one works
  t.is((await authenticate(legacy)).status, 401);
  t.is((await authenticate(byHand)).status, 401);
  t.like(await authenticate(hashed), { status: 200, credential: hashedId });

  // the migration aid: both kinds work; a stored digest is still no key
  await setAcceptPlaintext(stack, true);
  t.like(await authenticate(legacy), { status: 200, credential: plainIds.legacy });
  t.like(await authenticate(byHand), { status: 200, credential: plainIds.byHand });
  t.like(await authenticate(hashed), { status: 200, credential: hashedId });
  t.like(await authenticate(digestApiKey(hashed)), { status: 401, code: 'invalid_api_key' });

  const run = await runCliInProcess(['hash-keys'], { KONG_ADMIN_URL: stack.gateway.adminUrl });
  t.is(run.code, 0, run.stderr);
  const migrated = ((await stack.admin('/consumers/hk-migrating/key-auth')).body.data as Array<{ id: string; key: string; tags: string[] }>);
  const idOf = (key: string) => migrated.find((c) => c.key === digestApiKey(key))?.id;
  t.true(migrated.every((c) => c.tags.includes(KEY_HASH_TAG)), 'every credential is hashed now');
  for (const key of [legacy, byHand]) {
    t.is((await stack.admin(`/key-auths/${key}`)).status, 404, 'no credential holds the key in clear any more');
  }

  // the same keys keep working, now through their hashed credentials, with the aid on and off
  for (const on of [true, false]) {
    await setAcceptPlaintext(stack, on);
    for (const key of [legacy, byHand, hashed]) {
      const result = await authenticate(key);
      t.is(result.status, 200, `accept_plaintext_keys ${on}`);
      t.is(result.credential, idOf(key), `accept_plaintext_keys ${on}: the hashed credential`);
      t.not(result.credential, plainIds.legacy);
      t.not(result.credential, plainIds.byHand);
    }
    for (const c of migrated) t.is((await authenticate(c.key)).status, 401, `accept_plaintext_keys ${on}: a stored digest`);
  }
});
