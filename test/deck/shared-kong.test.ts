import { readFileSync } from 'node:fs';
import ava from 'ava';
import { digestApiKey, generateApiKey } from '../../packages/provisioning/index.ts';
import { KONG_YML, deck, startDeckStack, summaryOf, type DeckStack } from '../helpers/deck.ts';
import { startEchoUpstream, type EchoUpstream } from '../helpers/gateway.ts';
import { PLATFORM_YML } from '../helpers/gateway-files.ts';
import { TEAM_INVENTORY_YML } from '../helpers/stack.ts';

// One sync per team on one gateway (issue 28; Kong's federated configuration: one file and one
// select tag per team; Kong/deck#840, one team's sync deleting another's entities): decK itself
// syncs the platform's file, ours and team-inventory's onto a local gateway, in both orders, and
// `deck gateway dump --select-tag` of each team is byte-identical before and after the other's.
const test = ava.serial;
let stack: DeckStack;
let upstream: EchoUpstream;
let env: Record<string, string>;

test.before(async () => {
  stack = await startDeckStack('empty');
  upstream = await startEchoUpstream();
  env = {
    ...stack.env,
    DECK_ANIMAL_STORE_HOSTS: '["api.animal.store"]',
    DECK_INVENTORY_UPSTREAM_URL: upstream.url,
    DECK_INVENTORY_KEY: digestApiKey(generateApiKey()),
  };
});
test.after.always(async () => {
  await stack?.dispose();
  await upstream?.close();
});

const sync = (file: string) => deck(['gateway', 'sync', ...stack.addr, file], env);
async function dump(tag: string): Promise<string> {
  const file = stack.file(`dump-${tag}.yaml`);
  await deck(['gateway', 'dump', ...stack.addr, '--select-tag', tag, '-o', file, '--yes'], env);
  return readFileSync(file, 'utf8');
}
const diff = async (file: string) => summaryOf(await deck(['gateway', 'diff', ...stack.addr, file], env));

test('theirs first: our sync leaves their entities byte-identical', async (t) => {
  await sync(PLATFORM_YML);
  await sync(TEAM_INVENTORY_YML);
  const theirs = await dump('team-inventory');
  t.regex(theirs, /inventory-warehouse/);
  await sync(KONG_YML);
  t.is(await dump('team-inventory'), theirs);
  t.regex(await dump('platform'), /name: prometheus/);
});

test('with the other team present, each file diffs 0/0/0', async (t) => {
  for (const file of [PLATFORM_YML, KONG_YML, TEAM_INVENTORY_YML]) {
    t.deepEqual(await diff(file), { created: 0, updated: 0, deleted: 0 }, file);
  }
});

test('ours first: their sync, and their removal, leave our entities byte-identical', async (t) => {
  const ours = await dump('animal-store');
  const theirs = await dump('team-inventory');
  t.regex(ours, /animal-store-access/);
  await deck(['gateway', 'reset', ...stack.addr, '--select-tag', 'team-inventory', '--force'], env);
  t.is(await dump('animal-store'), ours, 'their removal');
  t.notRegex(await dump('team-inventory'), /^(services|consumers|plugins):/m, 'their entities are gone');
  await sync(TEAM_INVENTORY_YML);
  t.is(await dump('animal-store'), ours, 'their sync');
  t.is(await dump('team-inventory'), theirs, 'theirs as before: decK dumps no ids');
  t.deepEqual(await diff(KONG_YML), { created: 0, updated: 0, deleted: 0 });
});

// Two platform teams' pipelines run whenever they like: both syncs at once against one control
// plane interleave their Admin API writes, and each must still end with its whole file, the
// other's untouched, and the data plane running both.
test('two teams sync at once: each gets its whole file, ours is untouched, the proxy runs both', async (t) => {
  const garden = stack.file(
    'team-garden.yml',
    readFileSync(TEAM_INVENTORY_YML, 'utf8').replaceAll('inventory', 'garden').replaceAll('DECK_INVENTORY_KEY', 'DECK_GARDEN_KEY'),
  );
  const gardenEnv = { ...env, DECK_GARDEN_KEY: digestApiKey(generateApiKey()) };
  const theirs = await dump('team-inventory');
  const ours = await dump('animal-store');
  await deck(['gateway', 'reset', ...stack.addr, '--select-tag', 'team-inventory', '--force'], env);
  const [inventory, gardenSync] = await Promise.all([
    deck(['gateway', 'sync', ...stack.addr, TEAM_INVENTORY_YML], gardenEnv),
    deck(['gateway', 'sync', ...stack.addr, garden], gardenEnv),
  ]);
  t.like(summaryOf(inventory), { updated: 0, deleted: 0 });
  t.like(summaryOf(gardenSync), { updated: 0, deleted: 0 });
  // decK dumps no ids: each dump is what a sync of that file alone leaves
  t.is(await dump('team-inventory'), theirs);
  t.is(await dump('team-garden'), theirs.replaceAll('inventory', 'garden').replace(/key: \S+/, `key: ${gardenEnv.DECK_GARDEN_KEY}`));
  t.is(await dump('animal-store'), ours);
  for (const path of ['/inventory', '/garden']) {
    const response = await fetch(`${stack.gateway.proxyUrl}${path}`);
    t.is(response.status, 200, path);
    t.is(upstream.last()?.url, path);
  }
});
