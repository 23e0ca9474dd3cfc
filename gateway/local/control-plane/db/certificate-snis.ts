import { SchemaViolation } from '../schema/errors.ts';
import type { Draft } from './entity-store.ts';

// kong/db/dao/certificates.lua and snis.lua: a certificate's transient `snis` field is the names
// of the `snis` entities that reference it, read with it and replaced through it.

type View = Pick<Draft, 'list'>;

/** The names of the SNIs of a certificate, sorted (snis.lua list_for_certificate). */
export function snisOf(view: View, certificateId: string): string[] {
  return view
    .list('snis')
    .filter((sni) => sni.certificate.id === certificateId)
    .map((sni) => sni.name)
    .sort();
}

/**
 * The names a write gives, checked as parse_name_list and check_list_is_new do: no name twice,
 * none already another certificate's.
 */
export function checkNameList(view: View, names: readonly string[], certificateId: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new SchemaViolation({ snis: `${name} is duplicated` });
    seen.add(name);
  }
  for (const name of names) {
    const owner = view.list('snis').find((sni) => sni.name === name)?.certificate.id;
    if (owner !== undefined && owner !== certificateId) {
      throw new SchemaViolation({ snis: `${name} already associated with existing certificate '${owner}'` });
    }
  }
}

/**
 * snis.lua update_list: the certificate's SNIs become `names`; the ones it keeps keep their ids.
 * `insert` writes a new SNI through the entity service (its own checks apply); `remove` deletes one.
 */
export function replaceNameList(
  view: View,
  certificateId: string,
  names: readonly string[],
  insert: (name: string) => void,
  remove: (id: string) => void,
): void {
  const current = view.list('snis').filter((sni) => sni.certificate.id === certificateId);
  const wanted = new Set(names);
  for (const name of [...wanted].sort()) if (!current.some((sni) => sni.name === name)) insert(name);
  for (const sni of current) if (!wanted.has(sni.name)) remove(sni.id);
}
