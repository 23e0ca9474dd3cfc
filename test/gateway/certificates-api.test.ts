import { randomUUID } from 'node:crypto';
import test from 'ava';
import { request, type JsonResponse } from '../helpers/backend.ts';
import { startEmptyGateway, type TestGateway } from '../helpers/gateway.ts';
import { makeCertificate, type PemPair } from '../helpers/tls-certificates.ts';

// certificates, snis and ca_certificates on the Admin API, transcribed from Kong 3.9.3's
// spec/02-integration/04-admin_api/06-certificates_routes_spec.lua and 16-ca_certificates_routes_spec.lua
// (file:line in each test's name). The PEMs are made by openssl for the test, in the roles of
// spec/fixtures/ssl.lua's: an RSA pair, another RSA pair, an ECDSA pair.
type AdminCall = (path: string, init?: RequestInit & { json?: unknown }) => Promise<JsonResponse>;
interface Fixtures {
  rsa: PemPair;
  rsaOther: PemPair;
  ecdsa: PemPair;
  ca: PemPair;
}
let gateway: TestGateway;
let admin: AdminCall;
let pem: Fixtures;
const SPEC = '06-certificates_routes_spec.lua';
const CA_SPEC = '16-ca_certificates_routes_spec.lua';

let counter = 0;
const name = () => `sni-${String(++counter).padStart(3, '0')}.test`;

test.before(async () => {
  const [rsa, rsaOther, ecdsa, ca] = await Promise.all([
    makeCertificate({ name: 'ssl-example.com' }),
    makeCertificate({ name: 'ssl-alt.com' }),
    makeCertificate({ name: 'ssl-example.com', type: 'ecdsa' }),
    makeCertificate({ name: 'Test CA', ca: true }),
  ]);
  pem = { rsa, rsaOther, ecdsa, ca };
  gateway = await startEmptyGateway();
  admin = (path, init = {}) => request(`${gateway.adminUrl}${path}`, init);
});
test.after.always(async () => {
  await gateway?.dispose();
});

/** The spec's add_certificate: an RSA certificate with two new SNIs. */
async function addCertificate(alt = false): Promise<{ id: string; names: string[] }> {
  const names = [name(), name()];
  const body = { ...pem.rsa, ...(alt ? { cert_alt: pem.ecdsa.cert, key_alt: pem.ecdsa.key } : {}), snis: names };
  const res = await admin('/certificates', { method: 'POST', json: body });
  if (res.status !== 201) throw new Error(`add certificate: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.id, names };
}

test(`POST /certificates answers the certificate with its snis, sorted (${SPEC}:231)`, async (t) => {
  const [n1, n2] = [name(), name()];
  const res = await admin('/certificates', { method: 'POST', json: { ...pem.rsa, snis: [n2, n1] } });
  t.is(res.status, 201);
  t.is(res.body.cert, pem.rsa.cert);
  t.is(res.body.key, pem.rsa.key);
  t.is(res.body.cert_alt, null);
  t.is(res.body.key_alt, null);
  t.deepEqual(res.body.snis, [n1, n2]);
  const sni = await admin(`/snis/${n1}`);
  t.is(sni.body.certificate.id, res.body.id);
});

test(`POST /certificates without snis answers "snis":[] (${SPEC}:267)`, async (t) => {
  const res = await request(`${gateway.adminUrl}/certificates`, { method: 'POST', json: pem.rsa });
  t.is(res.status, 201);
  t.deepEqual(res.body.snis, []);
});

test(`POST /certificates with a name twice is refused, nothing stored (${SPEC}:156)`, async (t) => {
  const [n1, n2] = [name(), name()];
  const res = await admin('/certificates', { method: 'POST', json: { ...pem.rsa, snis: [n1, n2, n1] } });
  t.is(res.status, 400);
  t.is(res.body.message, `schema violation (snis: ${n1} is duplicated)`);
  t.is((await admin(`/snis/${n2}`)).status, 404);
});

test(`POST /certificates with another certificate's SNI is refused (${SPEC}:181)`, async (t) => {
  const first = await addCertificate();
  const n2 = name();
  const res = await admin('/certificates', { method: 'POST', json: { ...pem.rsa, snis: [first.names[0], n2] } });
  t.is(res.status, 400);
  t.is(res.body.message, `schema violation (snis: ${first.names[0]} already associated with existing certificate '${first.id}')`);
  t.is((await admin(`/snis/${n2}`)).status, 404);
});

// kong/db/dao/certificates.lua:51-75, 87-121, 124-140: parse_name_list (duplicates, then sorted), then
// snis:check_list_is_new (snis.lua:27-43), whose select_by_name validates each name
// (kong/db/dao/init.lua:349-371: invalid unique name, errors.lua:433-440), and only then the
// certificate's own schema
test('the SNI names are checked before the certificate: duplicates, then each sorted name, then cert and key (certificates.lua:51-140)', async (t) => {
  const first = await addCertificate();
  const [taken] = first.names as [string];
  const refused = { code: 2, name: 'schema violation' };
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    // a duplicate before the IP or the bad key
    ['duplicate', { cert: 'nope', key: 'nope', snis: ['1.2.3.4', 'q.test', 'q.test'] }, {
      ...refused, message: 'schema violation (snis: q.test is duplicated)', fields: { snis: 'q.test is duplicated' },
    }],
    // a name select_by_name refuses, before the cert (and after none)
    ['invalid name', { cert: 'nope', key: 'nope', snis: ['z.test', '1.2.3.4'] }, { code: 10, name: 'invalid unique name', message: 'must not be an IP' }],
    // the names sorted: the IP sorts before the taken name, and is checked first
    ['sorted', { ...pem.rsa, snis: [taken, '1.2.3.4'] }, { code: 10, name: 'invalid unique name', message: 'must not be an IP' }],
    ['taken, sorted', { cert: 'nope', key: 'nope', snis: ['zz.test', taken] }, {
      ...refused,
      message: `schema violation (snis: ${taken} already associated with existing certificate '${first.id}')`,
      fields: { snis: `${taken} already associated with existing certificate '${first.id}'` },
    }],
  ];
  const other = await addCertificate();
  for (const [label, body, expected] of cases) {
    const created = await admin('/certificates', { method: 'POST', json: body });
    t.deepEqual([created.status, created.body], [400, expected], `POST ${label}`);
    const patched = await admin(`/certificates/${other.id}`, { method: 'PATCH', json: body });
    t.deepEqual([patched.status, patched.body], [400, expected], `PATCH ${label}`);
    const put = await admin(`/certificates/${randomUUID()}`, { method: 'PUT', json: body });
    t.deepEqual([put.status, put.body], [400, expected], `PUT ${label}`);
  }
  // two taken: the first in sorted order is named
  const second = await addCertificate();
  const both = await admin('/certificates', { method: 'POST', json: { ...pem.rsa, snis: [second.names[1], taken] } });
  const firstTaken = [taken, second.names[1]!].sort()[0]!;
  const owner = firstTaken === taken ? first.id : second.id;
  t.is(both.body.message, `schema violation (snis: ${firstTaken} already associated with existing certificate '${owner}')`);
  // the names pass: the schema speaks
  const bad = await admin('/certificates', { method: 'POST', json: { cert: 'nope', key: pem.rsa.key, snis: ['fine.test'] } });
  t.is(bad.status, 400);
  t.deepEqual(Object.keys(bad.body.fields), ['cert']);
});

test(`GET /certificates/{id or sni} answers it with its snis; 404 for an unknown one (${SPEC}:292-362)`, async (t) => {
  const { id, names } = await addCertificate(true);
  const byId = await admin(`/certificates/${id}`);
  t.is(byId.status, 200);
  t.deepEqual(byId.body.snis, names);
  t.is(typeof byId.body.cert_alt, 'string');
  t.is(typeof byId.body.key_alt, 'string');
  t.deepEqual((await admin(`/certificates/${names[1]}`)).body, byId.body);
  t.is((await admin(`/certificates/${randomUUID()}`)).status, 404);
  const unknown = await admin('/certificates/doesntexist.test');
  t.is(unknown.status, 404);
  t.deepEqual(unknown.body, { message: 'SNI not found' });
});

test(`PUT /certificates/{sni} creates it with the URL's name among its snis (${SPEC}:389, :413)`, async (t) => {
  const [n1, n2] = [name(), name()];
  const res = await admin(`/certificates/${n1}`, { method: 'PUT', json: { ...pem.rsa, snis: [n2] } });
  t.is(res.status, 200);
  t.deepEqual(res.body.snis, [n1, n2]);
  const [n3, n4] = [name(), name()];
  const twice = await admin(`/certificates/${n3}`, { method: 'PUT', json: { ...pem.rsa, snis: [n3, n4] } });
  t.deepEqual(twice.body.snis, [n3, n4]);
});

test('PUT /certificates/{sni} without snis: the URL\'s name is not added, an existing one is removed (certificates.lua:34, :77, :92-93)', async (t) => {
  const [n1, n2] = [name(), name()];
  const created = await admin(`/certificates/${n1}`, { method: 'PUT', json: { ...pem.rsa } });
  t.is(created.status, 200);
  t.deepEqual(created.body.snis, []);
  t.is((await admin(`/certificates/${n1}`)).status, 404, 'no SNI of that name: the new certificate is found by its id only');
  t.is((await admin(`/certificates/${created.body.id as string}`)).status, 200);

  const existing = await admin('/certificates', { method: 'POST', json: { ...pem.rsa, snis: [n2] } });
  const replaced = await admin(`/certificates/${n2}`, { method: 'PUT', json: { ...pem.rsaOther } });
  t.is(replaced.status, 200);
  t.is(replaced.body.id, existing.body.id, 'the certificate of that SNI');
  t.deepEqual(replaced.body.snis, [], 'its snis, that name too, are gone');
  t.is((await admin(`/certificates/${n2}`)).status, 404);
});

test(`PUT /certificates/{id} checks the fields and the alternative pair (${SPEC}:483, :501)`, async (t) => {
  const missing = await admin(`/certificates/${randomUUID()}`, { method: 'PUT', json: {} });
  t.is(missing.status, 400);
  t.deepEqual(missing.body, {
    code: 2,
    name: 'schema violation',
    message: '2 schema violations (cert: required field missing; key: required field missing)',
    fields: { cert: 'required field missing', key: 'required field missing' },
  });
  const half = await admin(`/certificates/${randomUUID()}`, { method: 'PUT', json: { ...pem.rsa, cert_alt: pem.ecdsa.cert } });
  t.is(half.status, 400);
  t.deepEqual(half.body.fields, { '@entity': ["all or none of these fields must be set: 'cert_alt', 'key_alt'"] });
});

test(`a key that is not the certificate's is refused, the alternative one too (${SPEC}:523, :542)`, async (t) => {
  const res = await admin('/certificates', { method: 'POST', json: { cert: pem.rsa.cert, key: pem.rsaOther.key } });
  t.is(res.status, 400);
  t.is(res.body.message, 'schema violation (certificate does not match key)');
  t.deepEqual(res.body.fields, { '@entity': ['certificate does not match key'] });
  const alt = await admin('/certificates', {
    method: 'POST',
    json: { ...pem.rsa, cert_alt: pem.ecdsa.cert, key_alt: (await makeCertificate({ name: 'x', type: 'ecdsa' })).key },
  });
  t.is(alt.body.message, 'schema violation (alternative certificate does not match key)');
  // The message never carries the key.
  t.false(JSON.stringify(res.body).includes('PRIVATE KEY'));
});

test(`the alternative certificate must be of the other key type (${SPEC}:563)`, async (t) => {
  const res = await admin('/certificates', { method: 'POST', json: { ...pem.rsa, cert_alt: pem.rsaOther.cert, key_alt: pem.rsaOther.key } });
  t.is(res.status, 400);
  t.is(
    res.body.message,
    'schema violation (certificate and alternative certificate need to have different type (e.g. RSA and ECDSA), the provided certificates were both of the same type)',
  );
});

test('a PEM that is not a certificate or a key is refused naming the field, without the key (typedefs.lua:224-241)', async (t) => {
  const res = await admin('/certificates', { method: 'POST', json: { cert: 'not a certificate', key: `${pem.rsa.key.slice(0, 200)}` } });
  t.is(res.status, 400);
  t.regex(res.body.fields.cert, /^invalid certificate: /);
  t.regex(res.body.fields.key, /^invalid key: /);
  t.false(res.body.fields.key.includes(pem.rsa.key.slice(40, 80)));
});

test(`PATCH without snis keeps them; with snis replaces them; null removes them (${SPEC}:815, :871, :959)`, async (t) => {
  const { id, names } = await addCertificate();
  const kept = await admin(`/certificates/${id}`, { method: 'PATCH', json: { cert: pem.rsa.cert, key: pem.rsa.key } });
  t.is(kept.status, 200);
  t.deepEqual(kept.body.snis, names);
  const n3 = name();
  const replaced = await admin(`/certificates/${id}`, { method: 'PATCH', json: { snis: [names[0], n3] } });
  t.deepEqual(replaced.body.snis, [names[0], n3]);
  t.is((await admin(`/snis/${names[1]}`)).status, 404);
  const cleared = await admin(`/certificates/${id}`, { method: 'PATCH', json: { snis: null } });
  t.is(cleared.status, 200);
  t.deepEqual(cleared.body.snis, []);
});

test(`PATCH with another certificate's SNI is refused naming it (${SPEC}:932)`, async (t) => {
  const first = await addCertificate();
  const second = await addCertificate();
  const res = await admin(`/certificates/${first.id}`, { method: 'PATCH', json: { snis: second.names } });
  t.is(res.status, 400);
  t.is(res.body.message, `schema violation (snis: ${second.names[0]} already associated with existing certificate '${second.id}')`);
});

test(`DELETE /certificates/{sni} deletes it and its snis (${SPEC}:993)`, async (t) => {
  const { id, names } = await addCertificate();
  t.is((await admin(`/certificates/${names[0]}`, { method: 'DELETE' })).status, 204);
  t.is((await admin(`/certificates/${id}`)).status, 404);
  t.is((await admin(`/snis/${names[1]}`)).status, 404);
});

test(`/certificates/{id}/snis lists and creates its SNIs; a name taken is 409 (${SPEC}:1072, :1089)`, async (t) => {
  const { id, names } = await addCertificate();
  const n3 = name();
  const created = await admin(`/certificates/${id}/snis`, { method: 'POST', json: { name: n3 } });
  t.is(created.status, 201);
  t.is(created.body.certificate.id, id);
  const taken = await admin(`/certificates/${id}/snis`, { method: 'POST', json: { name: names[0] } });
  t.is(taken.status, 409);
  t.is(taken.body.message, `UNIQUE violation detected on '{name="${names[0]}"}'`);
  const list = await admin(`/certificates/${id}/snis`);
  t.deepEqual(list.body.data.map((sni: { name: string }) => sni.name).sort(), [...names, n3].sort());
});

test('/snis/{sni}/certificate is disabled: 404 Not found for each of its methods, OPTIONS too; POST 405; still listed (kong/api/routes/snis.lua:6, endpoints.lua:864-868)', async (t) => {
  const { id, names } = await addCertificate();
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    for (const key of [names[0]!, (await admin(`/snis/${names[0]!}`)).body.id as string]) {
      const res = await admin(`/snis/${key}/certificate`, { method, ...(method === 'PUT' || method === 'PATCH' ? { json: { ...pem.rsaOther } } : {}) });
      t.deepEqual([res.status, res.body], [404, { message: 'Not found' }], `${method} ${key}`);
    }
  }
  t.is((await admin(`/snis/${names[0]!}/certificate`, { method: 'POST', json: {} })).status, 405);
  t.is((await admin(`/certificates/${id}`)).body.cert, pem.rsa.cert, 'the certificate is unchanged');
  t.true(((await admin('/endpoints')).body.data as string[]).includes('/snis/{snis}/certificate'));
});

test(`SNI names take one wildcard, leftmost or rightmost, never an IP or a port (${SPEC}:1113-1165)`, async (t) => {
  const { id } = await addCertificate();
  for (const wildcard of ['*.wildcard.test', 'wildcard.*']) {
    const res = await admin('/snis', { method: 'POST', json: { name: wildcard, certificate: { id } } });
    t.is(res.status, 201, wildcard);
  }
  t.is((await admin('/snis/*.wildcard.test')).body.name, '*.wildcard.test');
  const invalid: Array<[string, string]> = [
    ['foo.*.test', 'wildcard must be leftmost or rightmost character'],
    ['*.foo.*', 'only one wildcard must be specified'],
    ['127.0.0.1', 'must not be an IP'],
    ['example.test:80', 'must not have a port'],
  ];
  for (const [sni, message] of invalid) {
    const res = await admin('/snis', { method: 'POST', json: { name: sni, certificate: { id } } });
    t.is(res.status, 400, sni);
    t.is(res.body.fields.name, message, sni);
  }
});

test(`ca_certificates: a CA, one at a time, with its SHA-256 digest; a server certificate is refused (${CA_SPEC})`, async (t) => {
  const res = await admin('/ca_certificates', { method: 'POST', json: { cert: pem.ca.cert } });
  t.is(res.status, 201);
  t.regex(res.body.cert_digest, /^[0-9a-f]{64}$/);
  const again = await admin('/ca_certificates', { method: 'POST', json: { cert: pem.ca.cert } });
  t.is(again.status, 409);
  const server = await admin('/ca_certificates', { method: 'POST', json: { cert: pem.rsa.cert } });
  t.is(server.status, 400);
  t.is(server.body.message, 'schema violation (certificate does not appear to be a CA because it is missing the "CA" basic constraint)');
  const two = await admin('/ca_certificates', { method: 'POST', json: { cert: `${pem.ca.cert}${pem.ca.cert}` } });
  t.is(two.body.message, 'schema violation (please submit only one certificate at a time)');
  t.is((await admin(`/ca_certificates/${res.body.id}`, { method: 'DELETE' })).status, 204);
});
