import { randomBytes } from 'node:crypto';
import anyTest from 'ava';
import { KEY_HASH_TAG, digestApiKey } from '../../../packages/provisioning/index.ts';
import { runCliInProcess } from '../../helpers/cli.ts';
import { startTarget, type Target } from '../../helpers/target.ts';

// The provisioning CLI's flows on hashed keys (issue 22), against the target's Admin API and
// proxy: the local stack, or a real Kong (GATEWAY_URL + KONG_ADMIN_URL). Kong holds only digests;
// the keys the CLI prints are what authenticate. No clock here (real Kong has none to move):
// rotate-key's grace is checked while it runs, expiry by --grace 0.
const test = anyTest.serial;
// module state, not ava's context: test/deck/sync-then-e2e.test.ts runs the portable files in one worker
const shared = {} as { target: Target; username: string };

test.before(async () => {
  shared.target = await startTarget();
  shared.username = `e2e-cli-${randomBytes(4).toString('hex')}`;
});
test.after.always(async () => {
  const { target, username } = shared;
  if (target && (await target.admin(`/consumers/${username}`)).status === 200) await target.admin(`/consumers/${username}`, { method: 'DELETE' });
  await target?.dispose();
});

/** The CLI's run, then (on Kong in hybrid mode) the data planes' next push: its writes are live. */
async function cli(args: string[]): Promise<string> {
  const result = await shared.target.writing(() => runCliInProcess(args, { KONG_ADMIN_URL: shared.target.adminUrl }));
  if (result.code !== 0) throw new Error(`consumers ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

const keyOf = (stdout: string) => (JSON.parse(stdout) as { key: string }).key;

async function pets(target: Target, key: string) {
  return target.call('/v1/pets', { key });
}

test('create, set-plan, rotate-key with grace, rotate-key --grace 0, revoke-key, delete', async (t) => {
  const { target, username } = shared;

  const first = keyOf(await cli(['create', '--username', username, '--plan', 'free', '--json']));
  let response = await pets(target, first);
  t.is(response.status, 200, 'create: the printed key works once the CLI returned (and the data planes got it)');
  t.is(response.headers.get('x-ratelimit-limit'), '60');
  const stored = (await target.admin(`/consumers/${username}/key-auth`)).body.data as Array<{ key: string; tags: string[] }>;
  t.deepEqual(stored.map((c) => c.key), [digestApiKey(first)], 'Kong holds the digest');
  t.true(stored[0]!.tags.includes(KEY_HASH_TAG));
  t.is((await pets(target, stored[0]!.key)).status, 401, 'the stored digest is no key');

  await cli(['set-plan', username, '--plan', 'pro']);
  response = await pets(target, first);
  t.is(response.headers.get('x-ratelimit-limit'), '300', 'set-plan: the new limits apply');

  const second = keyOf(await cli(['rotate-key', username, '--grace', '3600', '--json']));
  t.is((await pets(target, first)).status, 200, 'rotate-key: the old key works during the grace period');
  t.is((await pets(target, second)).status, 200, 'rotate-key: the new key works');

  const third = keyOf(await cli(['rotate-key', username, '--grace', '0', '--json']));
  t.is((await pets(target, first)).status, 401, 'rotate-key --grace 0: older keys are revoked at once');
  t.is((await pets(target, second)).status, 401);
  t.is((await pets(target, third)).status, 200);

  await cli(['revoke-key', username]);
  response = await pets(target, third);
  t.is(response.status, 401, 'revoke-key: every key answers 401');
  t.is(response.body.code, 'invalid_api_key');

  await cli(['delete', username]);
  t.is((await target.admin(`/consumers/${username}`)).status, 404, 'delete: the consumer is gone');
});
