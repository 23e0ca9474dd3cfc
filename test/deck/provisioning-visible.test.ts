import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { digestApiKey } from '../../packages/provisioning/index.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { deck, startDeckStack } from '../helpers/deck.ts';

// What the provisioning CLI does is what decK sees: `deck gateway dump --select-tag
// petstore-consumer` shows each consumer with its plan plugin and keys, as a platform team
// would read them off a shared Kong. The CLI runs in this process (its main(), as the process
// does: test/scripts/consumers-cli.test.ts covers the process), not a Node start per command.

interface DumpedConsumer {
  username: string;
  tags: string[];
  keyauth_credentials?: Array<{ key: string; ttl?: number | null }>;
  plugins?: Array<{ name: string; config: Record<string, unknown> }>;
}

test('create, set-plan, rotate-key and delete are visible in deck gateway dump with the CLI tag', async (t) => {
  const stack = await startDeckStack('kong.yml');
  const cli = (args: string[]) => runCliInProcess(args, { KONG_ADMIN_URL: stack.gateway.adminUrl });
  const dump = async (): Promise<DumpedConsumer[]> => {
    const file = stack.file('consumers.yml');
    await deck(['gateway', 'dump', ...stack.addr, '--select-tag', 'petstore-consumer', '-o', file, '--yes'], stack.env);
    return ((parse(readFileSync(file, 'utf8')) as { consumers?: DumpedConsumer[] }).consumers ?? []);
  };
  try {
    const created = await cli(['create', '--username', 'dana', '--plan', 'free', '--json']);
    t.is(created.code, 0, created.stderr);
    const firstKey = (JSON.parse(created.stdout) as { key: string }).key;
    let [dana, ...others] = await dump();
    t.deepEqual(others, []);
    t.is(dana!.username, 'dana');
    t.deepEqual(dana!.tags.sort(), ['petstore-consumer', 'plan:free']);
    t.deepEqual(dana!.keyauth_credentials!.map((k) => k.key), [digestApiKey(firstKey)], 'Kong holds the digest, never the key');
    t.deepEqual(dana!.plugins!.map((p) => [p.name, p.config.minute, p.config.day]), [['rate-limiting', 60, 1000]]);

    t.is((await cli(['set-plan', 'dana', '--plan', 'pro'])).code, 0);
    [dana] = await dump();
    t.true(dana!.tags.includes('plan:pro'));
    t.is(dana!.plugins![0]!.config.minute, 300);

    const rotated = await cli(['rotate-key', 'dana', '--grace', '3600', '--json']);
    t.is(rotated.code, 0, rotated.stderr);
    [dana] = await dump();
    const keys = dana!.keyauth_credentials!;
    t.is(keys.length, 2);
    t.true(keys.some((k) => k.key === digestApiKey((JSON.parse(rotated.stdout) as { key: string }).key)));

    t.is((await cli(['delete', 'dana'])).code, 0);
    t.deepEqual(await dump(), []);
  } finally {
    await stack.dispose();
  }
});

test("rotate-key puts the grace ttl on the old key, which Kong's Admin API returns with ttl: null", async (t) => {
  // kong/api/endpoints.lua answers with every field (nulls = true) and the PostgreSQL strategy
  // always selects ttl, so a key without one reads "ttl": null, as it does here.
  const stack = await startDeckStack('kong.yml');
  const cli = (args: string[]) => runCliInProcess(args, { KONG_ADMIN_URL: stack.gateway.adminUrl });
  try {
    const created = await cli(['create', '--username', 'erin', '--plan', 'free', '--json']);
    const oldKey = (JSON.parse(created.stdout) as { key: string }).key;
    const listed = await stack.admin('/consumers/erin/key-auth');
    t.is(listed.body.data[0].ttl, null);
    t.is((await cli(['rotate-key', 'erin', '--grace', '3600'])).code, 0);
    const old = (await stack.admin(`/consumers/erin/key-auth/${digestApiKey(oldKey)}`)).body as { ttl: number | null };
    t.true(typeof old.ttl === 'number' && old.ttl > 0 && old.ttl <= 3600, `old key's ttl: ${String(old.ttl)}`);
  } finally {
    await stack.dispose();
  }
});
