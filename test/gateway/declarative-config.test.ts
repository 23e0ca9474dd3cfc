import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { checkDeclarativeConfig, DeclarativeConfigError } from '../../gateway/local/index.ts';
import { writeConfig } from '../helpers/gateway.ts';
import { PLUGINS_DIR } from '../helpers/gateway-files.ts';
import { makeCertificate } from '../helpers/tls-certificates.ts';

// Configuration the local gateway cannot run faithfully makes it refuse to start, naming the
// entity and the field; it never ignores configuration silently. startGateway checks kong.yml
// before touching anything, as checkDeclarativeConfig (`kong config parse`) does: these cases call it.

async function refusal(yaml: string, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'refuse-'));
  try {
    await checkDeclarativeConfig({ configFile: writeConfig(dir, yaml), pluginsDir: PLUGINS_DIR, env });
  } catch (error) {
    if (!(error instanceof DeclarativeConfigError)) throw error;
    return error.problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  throw new Error('the configuration was accepted');
}

const base = (extra: string) => `_format_version: "3.0"\nservices:\n  - name: s\n    url: http://127.0.0.1:9\n${extra}`;

/** A kong.yml with one certificate whose key is another certificate's. */
async function mismatchedCertificate(): Promise<string> {
  const [a, b] = await Promise.all([makeCertificate({ name: 'a.test' }), makeCertificate({ name: 'b.test' })]);
  return `_format_version: "3.0"\ncertificates:\n  - cert: ${JSON.stringify(a.cert)}\n    key: ${JSON.stringify(b.key)}\n`;
}

const cases: Array<[string, string | (() => Promise<string>), RegExp, NodeJS.ProcessEnv?]> = [
  // the data plane's cjson would refuse the snapshot, and with it every configuration after it
  ['a lone surrogate escape in a string', `_format_version: "3.0"\nconsumers:\n  - username: "lone\\ud800x"\n`, /^consumers\[0\]\.username: a lone surrogate/],
  ['an unknown field', base('    colour: blue\n'), /services\[0\] \(s\): colour: unknown field/],
  ['a Kong field the local gateway does not implement', base('    tls_verify: true\n'), /services\[0\] \(s\): tls_verify: not supported by the local gateway/],
  ['a route field it does not implement', base('    routes:\n      - name: r\n        sources: [{ ip: 10.0.0.1 }]\n        paths: [/]\n'), /services\[0\] \(s\)\.routes\[0\] \(r\): sources: not supported/],
  [
    "route snis without TLS-only protocols (routes.lua's entity check)",
    base('    routes:\n      - name: r\n        snis: [a.example]\n        paths: [/]\n'),
    /services\[0\] \(s\)\.routes\[0\] \(r\): 'snis' can only be set when 'protocols' is 'grpcs', 'https', 'tls' or 'tls_passthrough'/,
  ],
  [
    "a route matching nothing (routes_subschemas.lua:12-18: with https, snis count and the message says so)",
    base('    routes:\n      - name: r\n        protocols: [http, https]\n'),
    /services\[0\] \(s\)\.routes\[0\] \(r\): must set one of 'methods', 'hosts', 'headers', 'paths', 'snis' when 'protocols' is 'https'$/,
  ],
  [
    'a certificate whose key is not its own, named without its key',
    mismatchedCertificate,
    /^[^\n]*certificates\[0\]: certificate does not match key$/,
  ],
  ['a plugin it does not implement', base('    plugins:\n      - name: cors\n'), /plugins\[0\] \(cors\): name: plugin 'cors' is bundled with Kong 3.9 but not implemented/],
  ['an unknown plugin', base('    plugins:\n      - name: telepathy\n'), /plugin 'telepathy' not enabled/],
  ['a plugin option it cannot honour', base('    plugins:\n      - name: rate-limiting\n        config: { minute: 5, policy: cluster }\n'), /\(rate-limiting\): config: not supported by the local gateway: config.policy: 'cluster'/],
  ['an invalid plugin config', base('    plugins:\n      - name: rate-limiting\n        config: { minute: fast }\n'), /\(rate-limiting\): config.minute: expected a number/],
  // kong/plugins/rate-limiting/schema.lua (3.9.3) validate_periods_order
  ['a plugin check (Kong custom_validator)', base('    plugins:\n      - name: rate-limiting\n        config: { minute: 10, hour: 5 }\n'), /The limit for hour\(5.0\) cannot be lower than the limit for minute\(10.0\)/],
  // kong/plugins/acl/schema.lua: only_one_of and at_least_one_of both fail, each its own line
  [
    'a plugin failing two entity checks',
    base('    plugins:\n      - name: acl\n        config: { allow: [] }\n'),
    /^services\[0\] \(s\)\.plugins\[0\] \(acl\): at least one of these fields must be non-empty: 'config.allow', 'config.deny'$/m,
  ],
  ["a plugin's protocol outside its schema's", base('    plugins:\n      - name: key-auth\n        protocols: [htps]\n'), /\(key-auth\): protocols.1: expected one of: grpc, grpcs, http, https$/],
  ['a consumer plugin on a plugin without consumer scope', '_format_version: "3.0"\nconsumers:\n  - username: u\n    plugins:\n      - name: key-auth\n', /consumers\[0\] \(u\)\.plugins\[0\] \(key-auth\): consumer: value must be null/],
  ['a missing DECK_ variable', base('').replace('http://127.0.0.1:9', '${{ env "DECK_NOT_SET" }}'), /environment variable "DECK_NOT_SET" present in state file but not set/],
  ['another format version', base('').replace('"3.0"', '"1.1"'), /_format_version: expected "3.0"/],
  ['an unknown top-level key', base('') + 'upstreams: []\n', /upstreams: unknown top-level key/],
];

for (const [label, yaml, expected] of cases) {
  test(`refuses to start on ${label}`, async (t) => {
    const problems = await refusal(typeof yaml === 'string' ? yaml : await yaml());
    t.true(problems.some((p) => expected.test(p)), problems.join('\n'));
  });
}

test('reports every problem at once', async (t) => {
  const problems = await refusal(base('    colour: blue\n    shade: dark\n'));
  t.is(problems.length, 2);
});

test('an entry nested under one that cannot be written is not reported again', async (t) => {
  const problems = await refusal(base('    colour: blue\n    routes:\n      - name: r\n        paths: [/]\n    plugins:\n      - name: correlation-id\n'));
  t.deepEqual(problems, ['services[0] (s): colour: unknown field']);
});

// decK refuses a file declaring one entity twice ("entity already exists"); the sync does not merge them.
test('an entity declared twice is refused, naming the second', async (t) => {
  const problems = await refusal(`${base('')}  - name: s\n    url: http://127.0.0.1:9\n`);
  t.deepEqual(problems, ["services[1] (s): name 's' is already declared in the file"]);
});
