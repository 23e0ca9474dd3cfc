import { readFileSync } from 'node:fs';
import test from 'ava';
import { parse, stringify } from 'yaml';
import { deck, startDeckStack, summaryOf, type DeckStack } from '../helpers/deck.ts';
import { makeCertificate, type PemPair } from '../helpers/tls-certificates.ts';

// Certificates with their SNIs and CA certificates through the real decK: `deck gateway sync`
// creates them (decK 3.0 lists certificates before services, SNIs nested as `snis: [{name}]`),
// `deck gateway dump` gives them back in the same shape, and `deck gateway diff` of either file
// finds nothing to do. decK's file schema has no cert_alt/key_alt: the alternative pair is the
// Admin API's only.
let stack: DeckStack;
let rsa: PemPair;
let ca: PemPair;

const ID = '6b5a3a6e-1d7c-4b6e-9f3f-3c1a0d5e7a11';

function teamFile(names: string[]): string {
  return stringify({
    _format_version: '3.0',
    _info: { select_tags: ['team-tls'] },
    ca_certificates: [{ cert: ca.cert }],
    certificates: [
      { id: ID, cert: rsa.cert, key: rsa.key, snis: names.map((name) => ({ name })) },
    ],
  });
}

interface Dump {
  certificates: Array<{ id: string; cert: string; key: string; snis?: Array<{ name: string; tags?: string[] }> }>;
  ca_certificates: Array<{ cert: string; cert_digest: string }>;
}

test.before(async () => {
  [rsa, ca] = await Promise.all([makeCertificate({ name: 'api.animal.test' }), makeCertificate({ name: 'Animal Test CA', ca: true })]);
  stack = await startDeckStack('empty');
});
test.after.always(async () => {
  await stack?.dispose();
});

test.serial('certificates with snis and a CA certificate round-trip: sync, dump, diff 0/0/0', async (t) => {
  const file = stack.file('team-tls.yml', teamFile(['api.animal.test', '*.animal.test']));
  const synced = await deck(['gateway', 'sync', ...stack.addr, file], stack.env);
  t.deepEqual(summaryOf(synced), { created: 4, updated: 0, deleted: 0 }, synced);
  const certificate = await stack.admin('/certificates/api.animal.test');
  t.is(certificate.body.id, ID);
  t.deepEqual(certificate.body.snis, ['*.animal.test', 'api.animal.test']);

  const dumpFile = stack.file('dump.yml');
  await deck(['gateway', 'dump', ...stack.addr, '--select-tag', 'team-tls', '-o', dumpFile, '--yes'], stack.env);
  const dump = parse(readFileSync(dumpFile, 'utf8')) as Dump;
  t.is(dump.certificates.length, 1);
  t.is(dump.certificates[0]?.id, ID);
  t.is(dump.certificates[0]?.key, rsa.key);
  t.deepEqual(dump.certificates[0]?.snis?.map((sni) => sni.name).sort(), ['*.animal.test', 'api.animal.test']);
  t.is(dump.ca_certificates.length, 1);

  for (const state of [file, dumpFile]) {
    const output = await deck(['gateway', 'diff', ...stack.addr, state], stack.env);
    t.deepEqual(summaryOf(output), { created: 0, updated: 0, deleted: 0 }, output);
  }
});

test.serial('an SNI dropped from the file is deleted, a new one created; the certificate keeps its id', async (t) => {
  const file = stack.file('team-tls-2.yml', teamFile(['api.animal.test', 'www.animal.test']));
  const synced = await deck(['gateway', 'sync', ...stack.addr, file], stack.env);
  t.deepEqual(summaryOf(synced), { created: 1, updated: 0, deleted: 1 }, synced);
  t.deepEqual((await stack.admin(`/certificates/${ID}`)).body.snis, ['api.animal.test', 'www.animal.test']);
  const output = await deck(['gateway', 'diff', ...stack.addr, file], stack.env);
  t.deepEqual(summaryOf(output), { created: 0, updated: 0, deleted: 0 }, output);
  t.deepEqual(stack.gateway.logs.filter((line) => line.startsWith('err')), [], 'no Admin API errors');
});
