import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { findSharedFile } from './shared-dir.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN_API = 'packages/provisioning/admin-api';

/**
 * The provisioning library's Admin API types (`npm run generate:kong-admin`), each spec to its
 * generated/ file, relative to the repository. Kong's own document lies beside the repository.
 * test/scripts/kong-admin-types.test.ts regenerates each and compares.
 */
export const KONG_ADMIN_TYPES = [
  { spec: '../shared/kong/admin-api-oss-3.9.openapi.yaml', output: `${ADMIN_API}/generated/kong-admin-api.d.ts` },
  { spec: `${ADMIN_API}/key-auth.openapi.yaml`, output: `${ADMIN_API}/generated/key-auth-api.d.ts` },
  { spec: `${ADMIN_API}/consumers.openapi.yaml`, output: `${ADMIN_API}/generated/consumers-api.d.ts` },
  { spec: `${ADMIN_API}/acl.openapi.yaml`, output: `${ADMIN_API}/generated/acl-api.d.ts` },
] as const;

/**
 * What `openapi-typescript <spec> --default-non-nullable false --empty-objects-unknown` writes,
 * generated in this process (its API, as its CLI calls it; one import for every spec instead of a
 * node per spec). Kong fills a field that has a default, so a request may leave it out (`enabled`,
 * `protocols`): not required. A plugin's `config` is an object whose fields depend on the plugin:
 * unknown, not Record<string, never>.
 */
export async function generatedTypes(spec: string): Promise<string> {
  // imported when called: the test worker that compares keeps openapi-typescript (and TypeScript)
  // out of its bundle
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  const ast = await openapiTS(pathToFileURL(spec), { defaultNonNullable: false, emptyObjectsUnknown: true, silent: true });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}

const SHARED = '../shared/';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Kong's document lies beside the repository, which a user's clone lacks: one line says so.
  const missing = KONG_ADMIN_TYPES.map(({ spec }) => spec).find(
    (spec) => spec.startsWith(SHARED) && findSharedFile(spec.slice(SHARED.length)) === undefined,
  );
  if (missing !== undefined) {
    console.error(`generate:kong-admin: ${missing} not found (Kong's Admin API spec, kept beside the repository)`);
    process.exitCode = 1;
  } else {
    for (const { spec, output } of KONG_ADMIN_TYPES) {
      const input = spec.startsWith(SHARED) ? findSharedFile(spec.slice(SHARED.length))! : join(ROOT, spec);
      writeFileSync(join(ROOT, output), await generatedTypes(input));
      console.log(`${spec} -> ${output}`);
    }
  }
}
