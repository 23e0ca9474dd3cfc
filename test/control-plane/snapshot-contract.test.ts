import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { GATEWAY_DIR, LOCAL_DECK_ENV } from '../../gateway/local/index.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { KONG_YML } from '../helpers/gateway-files.ts';
import { pollUntil } from '../helpers/poll.ts';

// The contract between the planes (gateway/local/README.md): the snapshot the control plane
// compiles from kong.yml validates against snapshot.schema.json, its hash is the hash of its
// entity payload as serialised, and the data-plane node holds exactly what was sent.

const schema = JSON.parse(readFileSync(join(GATEWAY_DIR, 'local/snapshot.schema.json'), 'utf8')) as object;

function fetchSnapshot(socketPath: string): Promise<string> {
  const query = new URLSearchParams({ node_id: randomUUID(), hostname: 'contract-test', hash: '', wait: '0' });
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, path: `/v1/snapshot?${query.toString()}` }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

test("kong.yml's snapshot validates against snapshot.schema.json and round-trips to the data plane", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'snapshot-contract-'));
  const gateway = await startTestGateway({ configFile: KONG_YML, dir, env: { ...LOCAL_DECK_ENV, DECK_ANIMAL_STORE_BACKEND_URL: 'http://127.0.0.1:9' } });
  t.teardown(async () => {
    await gateway.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const text = await fetchSnapshot(gateway.controlPlane.clusterAddress.replace(/^unix:/, ''));
  const snapshot = JSON.parse(text);

  // x-foreign: the entity list a reference points into (the data plane checks it; JSON Schema cannot).
  const ajv = new Ajv2020({ allErrors: true }).addKeyword({ keyword: 'x-foreign', schemaType: 'string' });
  const validate = ajv.compile(schema);
  t.true(validate(snapshot), JSON.stringify(validate.errors));

  // Every entity of kong.yml is in it, by name.
  const declared = parse(readFileSync(KONG_YML, 'utf8'));
  const routeNames = (declared.services ?? []).flatMap((s: { routes?: Array<{ name: string }> }) => (s.routes ?? []).map((r) => r.name));
  t.deepEqual(snapshot.routes.map((r: { name: string }) => r.name).sort(), routeNames.sort());
  t.deepEqual(snapshot.services.map((s: { name: string }) => s.name).sort(), declared.services.map((s: { name: string }) => s.name).sort());

  // The hash is the payload's: the parsed document serialises back to the same entities.
  const { certificates, snis, services, routes, consumers, keyauth_credentials, acls, plugins } = snapshot;
  const payload = JSON.stringify({ certificates, snis, services, routes, consumers, keyauth_credentials, acls, plugins });
  t.is(createHash('md5').update(payload).digest('hex'), snapshot.config_hash);
  t.is(JSON.stringify(snapshot), text, 'parse and serialise give the same document');

  // The node runs it: what it saved (<prefix>/snapshot.json) is the same document.
  const saved = () => {
    try {
      return JSON.parse(readFileSync(join(gateway.node.prefix, 'snapshot.json'), 'utf8'));
    } catch {
      return undefined;
    }
  };
  await pollUntil('the node to save the snapshot', async () => saved()?.config_hash === snapshot.config_hash);
  t.deepEqual(saved(), snapshot);
});
