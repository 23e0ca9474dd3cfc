// npm run generate:kong-admin: the Admin API's TypeScript types, from Kong's OpenAPI document kept
// in ../shared (which a user's clone lacks: one line says so) and from the supplements key-auth.openapi.yaml and acl.openapi.yaml.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { findSharedFile } from '../lib/shared-dir.ts';

const KONG_SPEC = 'kong/admin-api-oss-3.9.openapi.yaml';
const CLI = fileURLToPath(new URL('../../node_modules/openapi-typescript/bin/cli.js', import.meta.url));
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const spec = findSharedFile(KONG_SPEC);
if (spec === undefined) {
  console.error(`generate:kong-admin: ../shared/${KONG_SPEC} not found (Kong's Admin API spec, kept beside the repository)`);
  process.exitCode = 1;
} else {
  for (const [input, output] of [[spec, here('kong-admin-api.d.ts')], [here('key-auth.openapi.yaml'), here('key-auth-api.d.ts')], [here('acl.openapi.yaml'), here('acl-api.d.ts')]] as const) {
    execFileSync(process.execPath, [CLI, input, '-o', output], { stdio: 'inherit' });
  }
}
