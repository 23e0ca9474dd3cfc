import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { runCli } from '../helpers/cli.ts';
import { KONG_YML, deck, startDeckStack, summaryOf, type DeckStack } from '../helpers/deck.ts';

// Round trip through decK, and platform teams sharing one gateway: each team syncs its own
// select-tagged file (decK's --select-tag / _info.select_tags); consumers the provisioning CLI
// creates (tag petstore-consumer) belong to no file and survive every sync.
let stack: DeckStack;

const TEAM_B = `_format_version: "3.0"
_info:
  select_tags:
    - team-b
services:
  - name: team-b-service
    url: http://127.0.0.1:9/team-b
    routes:
      - name: team-b-route
        paths:
          - /team-b/
`;

test.before(async () => {
  // hosts named: with [] (any host) a dump leaves the empty list out, and the fresh gateway's
  // routes would differ from kong.yml by `hosts: []` (docs/shared-kong.md, "Hosts")
  stack = await startDeckStack('kong.yml', { DECK_ANIMAL_STORE_HOSTS: '["api.animal.store"]' });
  const created = await runCli(['create', '--username', 'cli-carol', '--plan', 'free'], { KONG_ADMIN_URL: stack.gateway.adminUrl });
  if (created.code !== 0) throw new Error(`consumers create failed: ${created.stderr}`);
});
test.after.always(async () => {
  await stack?.dispose();
});

test.serial('a dump of the animal-store tag, synced into a fresh gateway, equals kong.yml', async (t) => {
  const dumpFile = stack.file('dump.yml');
  await deck(['gateway', 'dump', ...stack.addr, '--select-tag', 'animal-store', '-o', dumpFile, '--yes'], stack.env);
  const dump = parse(readFileSync(dumpFile, 'utf8')) as { consumers: Array<{ username: string }>; _info: { select_tags: string[] } };
  t.deepEqual(dump._info.select_tags, ['animal-store']);
  t.deepEqual(dump.consumers.map((c) => c.username), ['animal-store-anonymous'], 'CLI-created consumers stay out of the dump');

  const fresh = await startDeckStack('empty');
  try {
    // The dump carries the backend URL of the gateway it came from; the fresh one runs the same
    // file, so the diff against kong.yml is made with the first stack's DECK_ variable.
    await deck(['gateway', 'sync', ...fresh.addr, dumpFile], stack.env);
    const output = await deck(['gateway', 'diff', ...fresh.addr, KONG_YML], stack.env);
    t.deepEqual(summaryOf(output), { created: 0, updated: 0, deleted: 0 }, output);
  } finally {
    await fresh.dispose();
  }
});

test.serial('deck gateway sync of kong.yml leaves the CLI-created consumer, its key and its plan alone', async (t) => {
  const before = await stack.admin('/consumers/cli-carol/key-auth');
  await deck(['gateway', 'sync', ...stack.addr, KONG_YML], stack.env);
  t.is((await stack.admin('/consumers/cli-carol')).status, 200);
  t.deepEqual((await stack.admin('/consumers/cli-carol/key-auth')).body.data, before.body.data);
  t.is((await stack.admin('/consumers/cli-carol/plugins')).body.data.length, 1);
});

test.serial("a second team's file synced with its select tag leaves ours alone, and ours leaves theirs", async (t) => {
  const teamB = stack.file('team-b.yml', TEAM_B);
  const theirs = await deck(['gateway', 'sync', ...stack.addr, teamB], stack.env);
  t.deepEqual(summaryOf(theirs), { created: 2, updated: 0, deleted: 0 }, theirs);
  const ours = await deck(['gateway', 'diff', ...stack.addr, KONG_YML], stack.env);
  t.deepEqual(summaryOf(ours), { created: 0, updated: 0, deleted: 0 }, ours);

  const resynced = await deck(['gateway', 'sync', ...stack.addr, KONG_YML], stack.env);
  t.deepEqual(summaryOf(resynced), { created: 0, updated: 0, deleted: 0 }, resynced);
  const stillTheirs = await deck(['gateway', 'diff', ...stack.addr, teamB], stack.env);
  t.deepEqual(summaryOf(stillTheirs), { created: 0, updated: 0, deleted: 0 }, stillTheirs);
  t.is((await stack.admin('/routes/team-b-route')).status, 200);
  t.is((await stack.admin('/consumers/cli-carol')).status, 200);
  t.deepEqual(stack.gateway.logs.filter((line) => line.startsWith('err')), [], 'no Admin API errors');
});
