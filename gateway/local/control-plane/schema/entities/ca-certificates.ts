import { defineEntity } from '../entity.ts';
import { certificateDigest, parseCertificate } from '../pem.ts';
import * as T from '../typedefs.ts';

const CERT_TAG = '-----BEGIN CERTIFICATE-----';

/**
 * kong/db/schema/entities/ca_certificates.lua (3.9.3): one CA certificate, not expired, with the
 * CA basic constraint; cert_digest is computed on write. The data plane receives none: nothing
 * the local gateway runs verifies peers against them (services' ca_certificates are refused).
 */
export const caCertificates = defineEntity({
  name: 'ca_certificates',
  primary_key: ['id'],
  schema: T.entity({
    id: T.uuid(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
    cert: T.certificate({ required: true }),
    cert_digest: T.string({ unique: true }),
    tags: T.tags(),
  }),
  check(ca, errors) {
    const first = ca.cert.indexOf(CERT_TAG);
    const cert = parseCertificate(ca.cert);
    if (first !== -1 && ca.cert.indexOf(CERT_TAG, first + CERT_TAG.length + 1) !== -1) {
      errors['@entity'] = 'please submit only one certificate at a time';
    } else if (!cert) {
      errors.cert = 'invalid certificate';
    } else if (Date.parse(cert.validTo) < Date.now()) {
      errors['@entity'] = 'certificate expired, "Not After" time is in the past';
    } else if (!cert.ca) {
      errors['@entity'] = 'certificate does not appear to be a CA because it is missing the "CA" basic constraint';
    }
  },
  transform(ca) {
    ca.cert_digest = certificateDigest(ca.cert) ?? null;
  },
  declarative: { key: [['id'], ['cert']], topLevel: true },
});
