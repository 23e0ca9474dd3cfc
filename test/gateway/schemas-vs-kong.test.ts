import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { substituteEnv } from '../../gateway/local/control-plane/declarative/load-config.ts';
import type { FieldSchema } from '../../gateway/local/control-plane/schema/field-schema.ts';
import { correlationId } from '../../gateway/local/control-plane/schema/plugins/correlation-id.ts';
import { keyAuth } from '../../gateway/local/control-plane/schema/plugins/key-auth.ts';
import type { PluginSchema } from '../../gateway/local/control-plane/schema/plugins/plugin-schema.ts';
import { prometheus } from '../../gateway/local/control-plane/schema/plugins/prometheus.ts';
import { rateLimiting } from '../../gateway/local/control-plane/schema/plugins/rate-limiting.ts';
import { requestSizeLimiting } from '../../gateway/local/control-plane/schema/plugins/request-size-limiting.ts';
import { requestTermination } from '../../gateway/local/control-plane/schema/plugins/request-termination.ts';
import { responseTransformer } from '../../gateway/local/control-plane/schema/plugins/response-transformer.ts';

// The native plugins' schemas are hand-written from Kong's schema.lua files; Kong's published
// JSON schemas (../shared/kong/plugin-schemas-3.9) keep them honest: same fields, same defaults.
const SCHEMAS = new URL('../../../shared/kong/plugin-schemas-3.9/', import.meta.url);
const FILES: Array<[PluginSchema, string]> = [
  [keyAuth, 'KeyAuth.json'],
  [rateLimiting, 'RateLimiting.json'],
  [requestTermination, 'RequestTermination.json'],
  [responseTransformer, 'ResponseTransformer.json'],
  [correlationId, 'CorrelationId.json'],
  [requestSizeLimiting, 'RequestSizeLimiting.json'],
  [prometheus, 'Prometheus.json'],
];

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  default?: unknown;
  type?: string;
}

const kongSchema = (file: string) => JSON.parse(readFileSync(new URL(file, SCHEMAS), 'utf8')) as JsonSchema;

function compare(ours: FieldSchema['fields'], theirs: Record<string, JsonSchema>, path: string, problems: string[]) {
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

for (const [definition, file] of FILES) {
  test(`${definition.name}: fields and defaults match Kong's published schema`, (t) => {
    const problems: string[] = [];
    compare(definition.configFields, kongSchema(file).properties!.config!.properties!, 'config', problems);
    t.deepEqual(problems, []);
  });
}

// kong.yml as decK renders it (${{ env "DECK_…" }}), for each place limits can count.
const DECK_ENVS: Record<string, NodeJS.ProcessEnv> = {
  local: { DECK_ANIMAL_STORE_BACKEND_URL: 'http://backend:3000', DECK_RATE_LIMIT_POLICY: 'local', DECK_RATE_LIMIT_REDIS_HOST: 'redis', DECK_RATE_LIMIT_REDIS_PORT: '6379' },
  redis: { DECK_ANIMAL_STORE_BACKEND_URL: 'http://backend:3000', DECK_RATE_LIMIT_POLICY: 'redis', DECK_RATE_LIMIT_REDIS_HOST: 'redis', DECK_RATE_LIMIT_REDIS_PORT: '6379' },
};

for (const [policy, env] of Object.entries(DECK_ENVS)) {
  test(`every plugin config in kong.yml validates against Kong's published schema (policy ${policy})`, (t) => {
    const problems: string[] = [];
    const text = substituteEnv(readFileSync(fileURLToPath(new URL('../../gateway/kong.yml', import.meta.url)), 'utf8'), env, problems);
    t.deepEqual(problems, []);
    const config = parse(text);
    const plugins: Array<{ name: string; config?: unknown }> = [
      ...(config.plugins ?? []),
      ...(config.services ?? []).flatMap((s: any) => [...(s.plugins ?? []), ...(s.routes ?? []).flatMap((r: any) => r.plugins ?? [])]),
      ...(config.consumers ?? []).flatMap((c: any) => c.plugins ?? []),
    ];
    const files: Record<string, string> = Object.fromEntries(FILES.map(([d, f]) => [d.name, f]));
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    let checked = 0;
    for (const plugin of plugins) {
      const file = files[plugin.name];
      if (!file) continue; // the custom plugins: their own schema.lua is checked by the loader
      const validate = ajv.compile(kongSchema(file));
      t.true(validate({ config: plugin.config ?? {} }), `${plugin.name}: ${ajv.errorsText(validate.errors)}`);
      checked += 1;
    }
    t.true(checked >= 4);
  });
}
