import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { KONG_ADMIN_OPENAPI } from '../helpers/kong-admin-contract.ts';
import { REPO_ROOT } from '../helpers/process.ts';

// scripts/kong-admin/*.d.ts are generated (npm run generate:kong-admin) and committed so that the
// CLI type-checks without ../shared; this keeps them from drifting from the specs they come from.
const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'node_modules/openapi-typescript/bin/cli.js');

for (const [spec, generated] of [
  [KONG_ADMIN_OPENAPI, 'scripts/kong-admin/kong-admin-api.d.ts'],
  [join(REPO_ROOT, 'scripts/kong-admin/key-auth.openapi.yaml'), 'scripts/kong-admin/key-auth-api.d.ts'],
  [join(REPO_ROOT, 'scripts/kong-admin/acl.openapi.yaml'), 'scripts/kong-admin/acl-api.d.ts'],
] as const) {
  if (spec === undefined) continue; // no ../shared: sharedFile registered the line that says so
  test(`${generated} is what openapi-typescript generates from its spec today`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kong-admin-types-'));
    try {
      const output = join(dir, 'types.d.ts');
      await run(process.execPath, [CLI, spec, '-o', output], { cwd: REPO_ROOT });
      t.true(
        readFileSync(output, 'utf8') === readFileSync(join(REPO_ROOT, generated), 'utf8'),
        `${generated} is stale: run npm run generate:kong-admin and commit the result`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
