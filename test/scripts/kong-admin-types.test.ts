import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { KONG_ADMIN_OPENAPI } from '../helpers/kong-admin-contract.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { generatedTypes, KONG_ADMIN_TYPES } from '../../scripts/tools/generate-kong-admin.ts';

// packages/provisioning/admin-api/generated/*.d.ts are generated (npm run generate:kong-admin) and
// committed so that the library type-checks without ../shared; this keeps them from drifting from
// the specs they come from.

for (const { spec: relativeSpec, output: generated } of KONG_ADMIN_TYPES) {
  // Kong's own document is the one beside the repository that the other contract tests read.
  const spec = relativeSpec.startsWith('../shared/') ? KONG_ADMIN_OPENAPI : join(REPO_ROOT, relativeSpec);
  if (spec === undefined) continue; // no ../shared: sharedFile registered the line that says so
  test(`${generated} is what openapi-typescript generates from its spec today`, async (t) => {
    t.true(
      (await generatedTypes(spec)) === readFileSync(join(REPO_ROOT, generated), 'utf8'),
      `${generated} is stale: run npm run generate:kong-admin and commit the result`,
    );
  });
}
