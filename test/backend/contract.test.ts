import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse } from 'yaml';
import { CONTRACT_FILE, readContractServers } from '../../backend/src/http/contract-routes.ts';
import { request, startTestBackend } from '../helpers/backend.ts';
import { contractProblems } from '../helpers/openapi-contract.ts';

// The backend renders the contract from the environment when the app is created.
process.env.API_PRODUCTION_URL = 'https://pets.example.org/v1';
process.env.API_STAGING_URL = 'https://staging.pets.example.org/v1';
const configuredServers = [
  { url: 'https://pets.example.org/v1', description: 'Production' },
  { url: 'https://staging.pets.example.org/v1', description: 'Staging' },
];
const file = parse(readFileSync(CONTRACT_FILE, 'utf8')) as Record<string, unknown>;

test('GET /openapi.json and /openapi.yaml serve gateway/openapi.yaml with the configured servers', async (t) => {
  const backend = await startTestBackend();
  t.teardown(() => backend.dispose());
  const json = await request(`${backend.url}/openapi.json`);
  t.is(json.status, 200);
  t.is(json.headers.get('content-type'), 'application/json; charset=utf-8');
  t.deepEqual(json.body, { ...file, servers: configuredServers });
  t.deepEqual(contractProblems('GET', '/openapi.json', json), []);

  const yaml = await fetch(`${backend.url}/openapi.yaml`);
  t.is(yaml.status, 200);
  t.is(yaml.headers.get('content-type'), 'application/yaml; charset=utf-8');
  t.deepEqual(parse(await yaml.text()), json.body);
});

test('the production and staging URLs default to the file\'s and must be http(s) URLs', (t) => {
  t.deepEqual(readContractServers({}), { production: 'https://api.example.com/v1', staging: 'https://staging-api.example.com/v1' });
  t.throws(() => readContractServers({ API_STAGING_URL: 'staging' }), { message: 'API_STAGING_URL must be an http(s) URL, got "staging"' });
  t.throws(() => readContractServers({ API_PRODUCTION_URL: 'ftp://x/v1' }), { message: /^API_PRODUCTION_URL must be an http\(s\) URL/ });
});
