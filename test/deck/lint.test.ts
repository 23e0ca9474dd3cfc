import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { KONG_YML, deck, runDeck } from '../helpers/deck.ts';
import { REPO_ROOT } from '../helpers/process.ts';

// The lint before sync (docs/shared-kong.md), by decK's own `file lint` (vacuum rules), as
// compose's deck-sync runs it: gateway/lint/team.yaml on gateway/kong.yml as written (render drops
// _info.select_tags), gateway/lint/hosts.yaml on the file rendered with the DECK_ variables. The
// file passes; each broken copy is refused, naming the rule.
let dir: string;
const TEAM = join(REPO_ROOT, 'gateway/lint/team.yaml');
const HOSTS = join(REPO_ROOT, 'gateway/lint/hosts.yaml');
const ENV = {
  DECK_ANIMAL_STORE_BACKEND_URL: 'http://backend:3000',
  DECK_ANIMAL_STORE_PORTAL_URL: 'http://portal:3001',
  DECK_ANIMAL_STORE_HOSTS: '["api.animal.store"]',
  DECK_ANIMAL_STORE_HTTPS_ONLY: 'true',
  DECK_RATE_LIMIT_POLICY: 'local',
  DECK_RATE_LIMIT_REDIS_HOST: 'redis',
  DECK_RATE_LIMIT_REDIS_PORT: '6379',
};
const kongYml = readFileSync(KONG_YML, 'utf8');

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'deck-lint-'));
});
test.after.always(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function lint(file: string, ruleset: string, severity: 'error' | 'warn' = 'error') {
  const result = await runDeck(['file', 'lint', '-s', file, '--fail-severity', severity, ruleset]);
  return { ...result, output: `${result.stdout}${result.stderr}` };
}

async function rendered(dir: string, name: string, env: Record<string, string>): Promise<string> {
  const file = join(dir, name);
  await deck(['file', 'render', '--populate-env-vars', KONG_YML, '-o', file], env);
  return file;
}

test('gateway/kong.yml passes team.yaml, and hosts.yaml in shared mode when its hosts are set', async (t) => {
  const team = await lint(KONG_YML, TEAM);
  t.is(team.code, 0, team.output);
  const hosts = await lint(await rendered(dir, 'hosts.yml', ENV), HOSTS, 'warn');
  t.is(hosts.code, 0, hosts.output);
});

test('without hosts: a warning alone on the gateway, a refusal in shared mode (--fail-severity warn)', async (t) => {
  const file = await rendered(dir, 'any-host.yml', { ...ENV, DECK_ANIMAL_STORE_HOSTS: '[]' });
  const alone = await lint(file, HOSTS);
  t.is(alone.code, 0, alone.output);
  t.regex(alone.output, /\[warn\].*animal-store-route-hosts/);
  const shared = await lint(file, HOSTS, 'warn');
  t.not(shared.code, 0);
  t.regex(shared.output, /animal-store-route-hosts/);
});

const ROUTE = '      - name: animal-store-v1\n';
const BROKEN: Array<[string, string, string]> = [
  ['a global plugin', 'animal-store-no-global-plugin', `${kongYml}plugins:\n  - name: cors\n`],
  [
    'a global plugin among scoped ones',
    'animal-store-no-global-plugin',
    `${kongYml}plugins:\n  - name: cors\n    service: animal-store-backend\n  - name: prometheus\n`,
  ],
  // decK syncs a plugin whose only scope is an empty name as a global one (`creating plugin … (global)`)
  ['a plugin on service ""', 'animal-store-no-global-plugin', `${kongYml}plugins:\n  - name: request-termination\n    service: ""\n`],
  [
    'a plugin on service "", route "" and consumer ""',
    'animal-store-no-global-plugin',
    `${kongYml}plugins:\n  - name: request-termination\n    service: ""\n    route: ""\n    consumer: ""\n`,
  ],
  // decK refuses these at validation; the lint says why before
  ['a plugin on service null', 'animal-store-no-global-plugin', `${kongYml}plugins:\n  - name: request-termination\n    service: ~\n`],
  ['a plugin on service {}', 'animal-store-no-global-plugin', `${kongYml}plugins:\n  - name: request-termination\n    service: {}\n`],
  ['a plugin on service " "', 'animal-store-no-global-plugin', `${kongYml}plugins:\n  - name: request-termination\n    service: " "\n`],
  ['a plugin on a service not ours', 'animal-store-no-global-plugin', `${kongYml}plugins:\n  - name: request-termination\n    service: team-inventory\n`],
  ['another select tag', 'animal-store-select-tag', kongYml.replace('  select_tags:\n    - animal-store\n', '  select_tags:\n    - team-inventory\n')],
  ['no select tag', 'animal-store-select-tag', kongYml.replace('_info:\n  select_tags:\n    - animal-store\n', '')],
  // decK adds our select tag to these: the entity would be the platform's too, and its sync deletes it
  [
    "a service tagged with the platform's select tag",
    'animal-store-entity-tags-ours',
    kongYml.replace('  - name: animal-store-portal\n    url:', '  - name: animal-store-portal\n    tags:\n      - animal-store-portal\n      - platform\n    url:'),
  ],
  [
    "a route's plugin tagged with another team's select tag",
    'animal-store-entity-tags-ours',
    kongYml.replace('            consumer: animal-store-anonymous\n', '            consumer: animal-store-anonymous\n            tags: [team-inventory]\n'),
  ],
  // the CLI's tag on kong.yml's credential
  ["an acl tagged with the CLI's tag", 'animal-store-entity-tags-ours', kongYml.replace('      - group: animal-store\n', '      - group: animal-store\n        tags: [petstore-consumer]\n')],
  // usage counts the metrics of services named animal-store-… (Kong labels them with the name, else the host)
  ['a service not named animal-store-…', 'animal-store-service-names', kongYml.replace('  - name: animal-store-portal\n    url:', '  - name: portal\n    url:')],
  ['a service without a name', 'animal-store-service-names', kongYml.replace('  - name: animal-store-portal\n    url:', '  - url:')],
  ['a route outside /v1', 'animal-store-routes-under-v1', kongYml.replace(ROUTE, `      - name: animal-store-admin\n        paths:\n          - /admin\n${ROUTE}`)],
  ['a regex route outside /v1', 'animal-store-routes-under-v1', kongYml.replace(ROUTE, `      - name: animal-store-v2\n        paths:\n          - ~/v2/pets$\n${ROUTE}`)],
  // /portal alone is ours (the redirect to /portal/); ~/portal would take /portalx, /portal-admin…
  ['a regex route wider than /portal', 'animal-store-routes-under-v1', kongYml.replace('          - ~/portal$\n', '          - ~/portal\n')],
  // Kong anchors the regex as a whole (^/v1/pets/$|/inventory): the alternation takes /inventory on any path
  ['a regex route with an alternation', 'animal-store-routes-under-v1', kongYml.replace('          - ~/v1/pets/$\n', '          - ~/v1/pets/$|/inventory\n')],
  ['a route without paths', 'animal-store-routes-under-v1', kongYml.replace(ROUTE, `      - name: animal-store-any\n        hosts:\n          - a.example\n${ROUTE}`)],
];

// one file per test (they run at once): labels that differ only in quotes or braces differ by index
const fileName = (index: number, label: string) => `${index}-${label.replace(/[^a-z0-9]+/gi, '-')}.yml`;

for (const [index, [label, rule, text]] of BROKEN.entries()) {
  test(`a copy with ${label} is refused: ${rule}`, async (t) => {
    t.not(text, kongYml, 'the copy is broken');
    const file = join(dir, fileName(index, label));
    writeFileSync(file, text);
    const result = await lint(file, TEAM);
    t.not(result.code, 0, result.output);
    t.regex(result.output, new RegExp(`\\[error\\].*${rule}`));
  });
}

// Top-level plugins that name one of ours are scoped, whichever of the three they name.
const SCOPED: Array<[string, string]> = [
  ['on our service', '    service: animal-store-backend\n'],
  ['on our route', '    route: animal-store-v1\n'],
  ['on our consumer', '    consumer: animal-store-anonymous\n'],
  ['on our route, service ""', '    service: ""\n    route: animal-store-v1\n'],
];

for (const [index, [label, scope]] of SCOPED.entries()) {
  test(`a copy with a top-level plugin ${label} passes`, async (t) => {
    const file = join(dir, fileName(index, `scoped ${label}`));
    writeFileSync(file, `${kongYml}plugins:\n  - name: request-termination\n${scope}`);
    const result = await lint(file, TEAM);
    t.is(result.code, 0, result.output);
  });
}
