import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { request } from '../helpers/backend.ts';
import { startTestGateway, writeConfig } from '../helpers/gateway.ts';
import { sharedFile } from '../helpers/shared-files.ts';

// The native plugins' schemas are hand-written from Kong's schema.lua files; Kong's published
// JSON schemas (../shared/kong/plugin-schemas-3.9) keep them honest: same fields, same defaults,
// as the Admin API's /schemas/plugins/{name} serves them. Without ../shared, sharedFile registers
// the one skipped test that says so, and the tests below are not registered.
const SCHEMAS = sharedFile('kong/plugin-schemas-3.9');
const FILES: Array<[string, string]> = [
  ['key-auth', 'KeyAuth.json'],
  ['rate-limiting', 'RateLimiting.json'],
  ['request-termination', 'RequestTermination.json'],
  ['response-transformer', 'ResponseTransformer.json'],
  ['correlation-id', 'CorrelationId.json'],
  ['request-size-limiting', 'RequestSizeLimiting.json'],
  ['prometheus', 'Prometheus.json'],
];

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  default?: unknown;
  type?: string;
}
interface KongField {
  type: string;
  default?: unknown;
  fields?: Array<Record<string, KongField>>;
}

const kongSchema = (schemas: string, file: string) => JSON.parse(readFileSync(join(schemas, file), 'utf8')) as JsonSchema;

function compare(ours: KongField['fields'], theirs: Record<string, JsonSchema>, path: string, problems: string[]) {
  const ourFields = new Map((ours ?? []).flatMap((entry) => Object.entries(entry)));
  for (const name of new Set([...ourFields.keys(), ...Object.keys(theirs)])) {
    const a = ourFields.get(name);
    const b = theirs[name];
    if (!a || !b) {
      problems.push(`${path}.${name}: ${a ? 'not in Kong' : 'missing here'}`);
      continue;
    }
    if (JSON.stringify(a.default ?? null) !== JSON.stringify(b.default ?? null) && b.type !== 'object') {
      problems.push(`${path}.${name}: default ${JSON.stringify(a.default)} here, ${JSON.stringify(b.default)} in Kong`);
    }
    if (a.type === 'record' && b.properties) compare(a.fields, b.properties, `${path}.${name}`, problems);
  }
}

if (SCHEMAS !== undefined) {
  test("the bundled plugins' schemas at /schemas/plugins/{name}: fields and defaults match Kong's published ones", async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'plugin-schemas-'));
    const gateway = await startTestGateway({ configFile: writeConfig(dir, '_format_version: "3.0"\n'), dir });
    t.teardown(async () => {
      await gateway.dispose();
      rmSync(dir, { recursive: true, force: true });
    });
    for (const [name, file] of FILES) {
      const served = await request(`${gateway.adminUrl}/schemas/plugins/${name}`);
      t.is(served.status, 200, name);
      const config = (served.body.fields as Array<Record<string, KongField>>).find((field) => field.config)?.config;
      const problems: string[] = [];
      compare(config?.fields, kongSchema(SCHEMAS, file).properties!.config!.properties!, 'config', problems);
      t.deepEqual(problems, [], name);
    }
  });
}

// kong.yml as decK renders it (${{ env "DECK_…" }}), for each place limits can count.
const DECK_ENVS: Record<string, NodeJS.ProcessEnv> = {
  local: { DECK_ANIMAL_STORE_BACKEND_URL: 'http://backend:3000', DECK_ANIMAL_STORE_PORTAL_URL: 'http://portal:3001', DECK_ANIMAL_STORE_HOSTS: '["api.animal.store"]', DECK_ANIMAL_STORE_HTTPS_ONLY: 'false', DECK_RATE_LIMIT_POLICY: 'local', DECK_RATE_LIMIT_REDIS_HOST: 'redis', DECK_RATE_LIMIT_REDIS_PORT: '6379' },
  redis: { DECK_ANIMAL_STORE_BACKEND_URL: 'http://backend:3000', DECK_ANIMAL_STORE_PORTAL_URL: 'http://portal:3001', DECK_ANIMAL_STORE_HOSTS: '["api.animal.store"]', DECK_ANIMAL_STORE_HTTPS_ONLY: 'true', DECK_RATE_LIMIT_POLICY: 'redis', DECK_RATE_LIMIT_REDIS_HOST: 'redis', DECK_RATE_LIMIT_REDIS_PORT: '6379' },
};

if (SCHEMAS !== undefined) {
  for (const [policy, env] of Object.entries(DECK_ENVS)) {
    test(`every plugin config in kong.yml and the platform's file validates against Kong's published schema (policy ${policy})`, (t) => {
      const unset: string[] = [];
      const render = (path: string) =>
        readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8').replace(
          /\$\{\{\s*env\s+"([^"]+)"\s*\}\}/g,
          (_whole, name: string) => env[name] ?? (unset.push(name), ''),
        );
      const team = parse(render('../../gateway/kong.yml'));
      const platform = parse(render('../../gateway/platform/kong.yml'));
      t.deepEqual(unset, []);
      const config = { ...team, plugins: [...(team.plugins ?? []), ...(platform.plugins ?? [])] };
      const plugins: Array<{ name: string; config?: unknown }> = [
        ...(config.plugins ?? []),
        ...(config.services ?? []).flatMap((s: any) => [...(s.plugins ?? []), ...(s.routes ?? []).flatMap((r: any) => r.plugins ?? [])]),
        ...(config.consumers ?? []).flatMap((c: any) => c.plugins ?? []),
      ];
      const files: Record<string, string> = Object.fromEntries(FILES);
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      let checked = 0;
      for (const plugin of plugins) {
        const file = files[plugin.name];
        if (!file) continue; // the custom plugins: their own schema.lua is checked by the loader
        const validate = ajv.compile(kongSchema(SCHEMAS, file));
        t.true(validate({ config: plugin.config ?? {} }), `${plugin.name}: ${ajv.errorsText(validate.errors)}`);
        checked += 1;
      }
      t.true(checked >= 4);
    });
  }
}
