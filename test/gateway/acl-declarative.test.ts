import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from '../helpers/backend.ts';
import { startTestGateway, writeConfig } from '../helpers/gateway.ts';

// kong.yml's consumers[].acls (decK 3.0 nests them under their consumer, as it nests
// keyauth_credentials): loaded, matched again on re-sync by consumer + group (so they keep their
// ids), deleted when the file drops them, and left alone outside the select tags.

const config = (groups: string[]) => `_format_version: "3.0"
_info:
  select_tags: [team-a]
consumers:
  - username: alice
    acls:
${groups.map((group) => `      - group: ${group}\n`).join('')}  - username: bob
    acls: [{ group: gold, tags: [vip] }]
`;

test('consumers[].acls load, re-sync by consumer + group, and follow the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'acl-declarative-'));
  const file = writeConfig(dir, config(['animal-store', 'gold']));
  const gateway = await startTestGateway({ configFile: file, dir });
  t.teardown(async () => {
    await gateway.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = (path: string, init?: RequestInit & { json?: unknown }) => request(`${gateway.adminUrl}${path}`, init);
  const groupsOf = async (username: string) =>
    ((await admin(`/consumers/${username}/acls`)).body.data as Array<{ group: string; id: string; tags: string[] }>).sort((a, b) => (a.group < b.group ? -1 : 1));

  const alice = await groupsOf('alice');
  t.deepEqual(alice.map((a) => [a.group, a.tags]), [['animal-store', ['team-a']], ['gold', ['team-a']]]);
  t.deepEqual((await groupsOf('bob')).map((a) => [a.group, a.tags]), [['gold', ['vip', 'team-a']]]);

  // An ACL made through the Admin API, outside the select tags, survives every sync.
  t.is((await admin('/consumers/alice/acls', { method: 'POST', json: { group: 'admin-made' } })).status, 201);

  writeFileSync(file, config(['gold', 'silver']));
  t.deepEqual(await gateway.reload(), { created: 1, updated: 0, deleted: 1 });
  const after = await groupsOf('alice');
  t.deepEqual(after.map((a) => a.group), ['admin-made', 'gold', 'silver']);
  t.is(after.find((a) => a.group === 'gold')?.id, alice.find((a) => a.group === 'gold')?.id, 'matched by consumer + group: same id');

  // The same group twice for one consumer is refused, as decK refuses it ("entity already exists").
  writeFileSync(file, config(['gold', 'gold']));
  const refused = await gateway.reload().then(
    () => 'reloaded',
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  t.regex(refused, /consumers\[0\] \(alice\)\.acls\[1\]: group 'gold' is already declared for this consumer/);
  t.deepEqual((await groupsOf('alice')).map((a) => a.group), ['admin-made', 'gold', 'silver'], 'nothing of the refused file applied');

});

test('an ACL without a group is refused, naming where it is', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'acl-declarative-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = writeConfig(dir, '_format_version: "3.0"\nconsumers:\n  - username: alice\n    acls: [{ tags: [x] }]\n');
  const error = await startTestGateway({ configFile: file, dir }).then(
    async (gateway) => {
      await gateway.dispose();
      return '';
    },
    (failure: unknown) => (failure instanceof Error ? failure.message : String(failure)),
  );
  t.regex(error, /consumers\[0\] \(alice\)\.acls\[0\]: group: required field missing/);
});
