import { defineEntity } from '../entity.ts';
import { wildcardSniError } from '../hosts.ts';
import { certificateKeyType, keyMatchesCertificate } from '../pem.ts';
import * as T from '../typedefs.ts';

/**
 * kong/db/schema/entities/certificates.lua (3.9.3). `snis` is transient: the names are `snis`
 * entities, which the certificates DAO (kong/db/dao/certificates.lua) writes and lists with it.
 * Keys are secrets: they go to the data plane, never into a message or a log.
 */
export const certificates = defineEntity({
  name: 'certificates',
  primary_key: ['id'],
  schema: T.entity({
    id: T.uuid(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
    cert: T.certificate({ required: true }),
    key: T.key({ required: true }),
    cert_alt: T.certificate({ required: false }),
    key_alt: T.key({ required: false }),
    tags: T.tags(),
    snis: T.array(T.string({ custom: wildcardSniError }), { required: false, transient: true }),
  }),
  check(certificate, errors) {
    const entity: string[] = [];
    // mutually_required = { "cert_alt", "key_alt" }
    if ((certificate.cert_alt === null) !== (certificate.key_alt === null)) {
      entity.push("all or none of these fields must be set: 'cert_alt', 'key_alt'");
    }
    if (!keyMatchesCertificate(certificate.cert, certificate.key)) entity.push('certificate does not match key');
    const { cert_alt: certAlt, key_alt: keyAlt } = certificate;
    if (certAlt !== null && keyAlt !== null && !keyMatchesCertificate(certAlt, keyAlt)) entity.push('alternative certificate does not match key');
    if (certificate.cert_alt !== null && certificateKeyType(certificate.cert) === certificateKeyType(certificate.cert_alt)) {
      entity.push(
        'certificate and alternative certificate need to have different type (e.g. RSA and ECDSA), the provided certificates were both of the same type',
      );
    }
    // One message per entity check, in the order Kong runs them; the first when several fail.
    if (entity.length > 0) errors['@entity'] = entity[0]!;
  },
  declarative: { key: [['id'], ['cert', 'key']], secretKey: true, topLevel: true },
  snapshot: {
    description:
      "kong/db/schema/entities/certificates.lua: PEM certificates (a chain, leaf first) and their private keys; cert_alt/key_alt the " +
      'pair of the other key type (RSA beside ECDSA). Served for the SNIs that name them.',
    fields: ['id', 'cert', 'key', 'cert_alt', 'key_alt'],
  },
});
