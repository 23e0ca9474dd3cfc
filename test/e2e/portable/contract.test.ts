import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { contractProblems } from '../../helpers/openapi-contract.ts';
import { REPO_ROOT } from '../../helpers/process.ts';
import { startTarget, type Target } from '../../helpers/target.ts';

// issue 16: the contract is served through the gateway at /v1/openapi.{json,yaml}; bearer
// authentication applies to every operation (spec), this one included.
// module state, not ava's context: test/deck/sync-then-e2e.test.ts runs the portable files in one worker
const shared = {} as { target: Target; key: string };
const file = parse(readFileSync(`${REPO_ROOT}gateway/openapi.yaml`, 'utf8')) as Record<string, unknown>;

test.before(async () => {
  shared.target = await startTarget();
  shared.key = await shared.target.provision('contract-carol', { minute: 100, day: 1000 });
});
test.after.always(async () => {
  await shared.target?.dispose();
});

test('GET /v1/openapi.json is gateway/openapi.yaml, servers aside, with the rate-limit headers', async (t) => {
  const response = await shared.target.call('/v1/openapi.json', { key: shared.key });
  t.is(response.status, 200);
  t.deepEqual(contractProblems('GET', '/openapi.json', response, { checkHeaders: true }), []);
  const { servers, ...served } = response.body as Record<string, unknown>;
  const { servers: _fileServers, ...expected } = file;
  t.deepEqual(served, expected);
  t.deepEqual((servers as Array<{ description: string }>).map((server) => server.description), ['Production', 'Staging']);
});

test('GET /v1/openapi.yaml is the same document in YAML', async (t) => {
  const json = await shared.target.call('/v1/openapi.json', { key: shared.key });
  const yaml = await shared.target.call('/v1/openapi.yaml', { key: shared.key });
  t.is(yaml.status, 200);
  t.regex(yaml.headers.get('content-type') ?? '', /^application\/yaml\b/);
  t.deepEqual(parse(yaml.body as string), json.body);
});

test('the contract needs a key like every operation', async (t) => {
  for (const path of ['/v1/openapi.json', '/v1/openapi.yaml']) {
    const response = await shared.target.call(path);
    t.is(response.status, 401, path);
    t.is(response.body.code, 'missing_api_key');
  }
});
