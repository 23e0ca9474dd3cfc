import { defineEntity } from '../entity.ts';
import { wildcardSniError } from '../hosts.ts';
import * as T from '../typedefs.ts';

/** kong/db/schema/entities/snis.lua (3.9.3): a server name (wildcards allowed) and the certificate served for it. */
export const snis = defineEntity({
  name: 'snis',
  primary_key: ['id'],
  endpoint_key: 'name',
  schema: T.entity({
    id: T.uuid(),
    name: T.string({ required: true, unique: true, custom: wildcardSniError }),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
    tags: T.tags(),
    // kong/db/dao/certificates.lua deletes a certificate's SNIs with it.
    certificate: T.foreign('certificates', { required: true, on_delete: 'cascade' }),
  }),
  declarative: { key: [['name']], keyRequired: true, topLevel: { requires: 'certificate' }, nestedIn: ['certificate'] },
  snapshot: {
    description:
      "kong/db/schema/entities/snis.lua: the certificate a TLS handshake naming this server gets (kong/runloop/certificate.lua: the exact " +
      "name, then '*.' + the name's parent, then the name's last label as '*', then the SNI '*', else the default certificate).",
    fields: ['id', 'name', 'certificate'],
  },
});
