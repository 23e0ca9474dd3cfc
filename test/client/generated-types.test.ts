import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { REPO_ROOT } from '../helpers/process.ts';

// gateway/client/generated/animal-store-api.d.ts is generated from the contract (npm run generate:client)
// and committed; this keeps the client's types from drifting from gateway/openapi.yaml.
const GENERATED = 'gateway/client/generated/animal-store-api.d.ts';

test(`${GENERATED} is what openapi-typescript generates from gateway/openapi.yaml today`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'client-types-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const output = join(dir, 'types.d.ts');
  const cli = join(REPO_ROOT, 'node_modules/openapi-typescript/bin/cli.js');
  await promisify(execFile)(process.execPath, [cli, 'gateway/openapi.yaml', '-o', output], { cwd: REPO_ROOT });
  t.true(
    readFileSync(output, 'utf8') === readFileSync(join(REPO_ROOT, GENERATED), 'utf8'),
    `${GENERATED} is stale: run npm run generate:client and commit the result`,
  );
});
