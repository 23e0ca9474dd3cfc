import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { deck, startDeckStack, summaryOf, type DeckStack } from '../helpers/deck.ts';

// Consumers' ACL groups through the real decK: `deck gateway sync` creates them (decK 3.0 nests
// `acls: [{group}]` under each consumer), `deck gateway dump` gives them back in the same shape,
// and `deck gateway diff` of either file finds nothing to do.
let stack: DeckStack;

const teamFile = (aliceGroups: string[]) => `_format_version: "3.0"
_info:
  select_tags:
    - team-acl
consumers:
  - username: acl-alice
    acls:
${aliceGroups.map((group) => `      - group: ${group}\n`).join('')}  - username: acl-bob
    acls:
      - group: animal-store
        tags:
          - vip
`;

interface Dump {
  consumers: Array<{ username: string; acls?: Array<{ group: string; tags?: string[] }> }>;
}

test.before(async () => {
  stack = await startDeckStack('empty');
});
test.after.always(async () => {
  await stack?.dispose();
});

test.serial('consumers with acls round-trip: sync, dump, diff 0/0/0', async (t) => {
  const file = stack.file('team-acl.yml', teamFile(['animal-store', 'gold']));
  const synced = await deck(['gateway', 'sync', ...stack.addr, file], stack.env);
  t.deepEqual(summaryOf(synced), { created: 5, updated: 0, deleted: 0 }, synced);
  const groups = (await stack.admin('/consumers/acl-alice/acls')).body.data.map((a: { group: string }) => a.group).sort();
  t.deepEqual(groups, ['animal-store', 'gold']);

  const dumpFile = stack.file('dump.yml');
  await deck(['gateway', 'dump', ...stack.addr, '--select-tag', 'team-acl', '-o', dumpFile, '--yes'], stack.env);
  const dump = parse(readFileSync(dumpFile, 'utf8')) as Dump;
  const byName = Object.fromEntries(dump.consumers.map((c) => [c.username, c.acls]));
  t.deepEqual(byName['acl-alice']?.map((a) => a.group).sort(), ['animal-store', 'gold']);
  t.deepEqual(byName['acl-bob'], [{ group: 'animal-store', tags: ['vip', 'team-acl'] }]);

  for (const state of [file, dumpFile]) {
    const output = await deck(['gateway', 'diff', ...stack.addr, state], stack.env);
    t.deepEqual(summaryOf(output), { created: 0, updated: 0, deleted: 0 }, output);
  }
});

test.serial('a group dropped from the file is deleted, a new one created; the others keep their ids', async (t) => {
  const before = (await stack.admin('/consumers/acl-alice/acls/gold')).body.id;
  const file = stack.file('team-acl-2.yml', teamFile(['gold', 'platinum']));
  const synced = await deck(['gateway', 'sync', ...stack.addr, file], stack.env);
  t.deepEqual(summaryOf(synced), { created: 1, updated: 0, deleted: 1 }, synced);
  t.is((await stack.admin('/consumers/acl-alice/acls/gold')).body.id, before);
  t.is((await stack.admin('/consumers/acl-alice/acls/animal-store')).status, 404);
  const output = await deck(['gateway', 'diff', ...stack.addr, file], stack.env);
  t.deepEqual(summaryOf(output), { created: 0, updated: 0, deleted: 0 }, output);
  t.deepEqual(stack.gateway.logs.filter((line) => line.startsWith('err')), [], 'no Admin API errors');
});
