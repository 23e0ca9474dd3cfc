import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { KONG_ADMIN_OPENAPI } from '../helpers/kong-admin-contract.ts';
import { REPO_ROOT } from '../helpers/process.ts';
import { KONG_ADMIN_TYPES, OPENAPI_TYPESCRIPT, OPENAPI_TYPESCRIPT_FLAGS } from '../../scripts/tools/generate-kong-admin.ts';

// packages/provisioning/admin-api/generated/*.d.ts are generated (npm run generate:kong-admin) and
// committed so that the library type-checks without ../shared; this keeps them from drifting from
// the specs they come from.
const run = promisify(execFile);

for (const { spec: relativeSpec, output: generated } of KONG_ADMIN_TYPES) {
  // Kong's own document is the one beside the repository that the other contract tests read.
  const spec = relativeSpec.startsWith('../shared/') ? KONG_ADMIN_OPENAPI : join(REPO_ROOT, relativeSpec);
  if (spec === undefined) continue; // no ../shared: sharedFile registered the line that says so
  test(`${generated} is what openapi-typescript generates from its spec today`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kong-admin-types-'));
    try {
      const output = join(dir, 'types.d.ts');
      await run(process.execPath, [OPENAPI_TYPESCRIPT, spec, '-o', output, ...OPENAPI_TYPESCRIPT_FLAGS], { cwd: REPO_ROOT });
      t.true(
        readFileSync(output, 'utf8') === readFileSync(join(REPO_ROOT, generated), 'utf8'),
        `${generated} is stale: run npm run generate:kong-admin and commit the result`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
