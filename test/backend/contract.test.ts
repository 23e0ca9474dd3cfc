import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { parse } from 'yaml';
import { renderedOnce } from '../../packages/node-runtime/rendered-once.js';
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

// The contract is rendered once per clone (packages/node-runtime/rendered-once.js): a start reads
// the last start's rendering of the same inputs from node_modules/.cache/, a production image
// (no .cache) renders at each start.
function fakeNodeModules(t: ExecutionContext, withCache: boolean, yamlVersion = '2.0.0'): URL {
  const root = mkdtempSync(join(tmpdir(), 'rendered-once-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'yaml'));
  writeFileSync(join(root, 'yaml/package.json'), JSON.stringify({ version: yamlVersion }));
  if (withCache) mkdirSync(join(root, '.cache'));
  return pathToFileURL(`${root}/`);
}

test('a rendering is kept by its inputs and the renderer\'s package version, and read back by the next call', (t) => {
  const nodeModules = fakeNodeModules(t, true);
  let renders = 0;
  const render = (text: string) => () => ({ text, count: ++renders });
  t.deepEqual(renderedOnce(nodeModules, { inputs: ['a'], packages: ['yaml'] }, render('a')), { text: 'a', count: 1 });
  t.deepEqual(renderedOnce(nodeModules, { inputs: ['a'], packages: ['yaml'] }, render('a')), { text: 'a', count: 1 }, 'read back, not rendered');
  t.deepEqual(renderedOnce(nodeModules, { inputs: ['b'], packages: ['yaml'] }, render('b')), { text: 'b', count: 2 }, 'other inputs: rendered');
  writeFileSync(new URL('yaml/package.json', nodeModules), JSON.stringify({ version: '2.0.1' }));
  t.deepEqual(renderedOnce(nodeModules, { inputs: ['a'], packages: ['yaml'] }, render('a')), { text: 'a', count: 3 }, 'another version of the renderer: rendered');
  t.is(readdirSync(new URL('.cache/animal-store/rendered/', nodeModules)).length, 3);
  t.throws(() => renderedOnce(nodeModules, { inputs: ['c'], packages: ['yaml'] }, () => { throw new Error('no bearer scheme'); }), { message: 'no bearer scheme' });
  t.is(readdirSync(new URL('.cache/animal-store/rendered/', nodeModules)).length, 3, 'a failed rendering is not kept');
});

test('without node_modules/.cache (a production image) every call renders and nothing is written', (t) => {
  const nodeModules = fakeNodeModules(t, false);
  let renders = 0;
  for (let i = 0; i < 2; i++) renderedOnce(nodeModules, { inputs: ['a'], packages: ['yaml'] }, () => ++renders);
  t.is(renders, 2);
  t.deepEqual(readdirSync(nodeModules), ['yaml']);
});
