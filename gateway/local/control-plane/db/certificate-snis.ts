import { snis } from '../schema/entities/snis.ts';
import { InvalidUnique, SchemaViolation } from '../schema/errors.ts';
import { validateField, type FieldErrors } from '../schema/validate.ts';
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
 * The names a certificate write gives, checked before the certificate's schema as
 * kong/db/dao/certificates.lua does (:51-140): parse_name_list refuses a name given twice and
 * sorts them; snis:check_list_is_new (snis.lua:27-43) then takes each in turn, validated as
 * select_by_name validates a unique key (kong/db/dao/init.lua:349-371: 400 invalid unique name),
 * refused when another certificate has it. `certificateId` is the one written, undefined for an
 * insert. Anything but a list of strings is left to the schema.
 */
export function checkNameList(view: View, input: unknown, certificateId: string | undefined): void {
  if (!Array.isArray(input)) return;
  const seen = new Set<unknown>();
  for (const name of input) {
    if (seen.has(name)) throw new SchemaViolation({ snis: `${String(name)} is duplicated` });
    seen.add(name);
  }
  if (!input.every((name): name is string => typeof name === 'string')) return;
  // Lua's table.sort compares strings bytewise
  const sorted = [...input].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const name of sorted) {
    const invalid: FieldErrors = {};
    validateField(snis.schema.properties.name, name, 'name', invalid);
    if (invalid.name !== undefined) throw new InvalidUnique('name', invalid.name);
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
