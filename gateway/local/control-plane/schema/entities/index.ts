import type { EntityDefinition, EntityOf, RunDefinition } from '../entity.ts';
import { kongField } from '../typedefs.ts';
import { acls } from './acls.ts';
import { caCertificates } from './ca-certificates.ts';
import { certificates } from './certificates.ts';
import { consumers } from './consumers.ts';
import { keyauthCredentials } from './keyauth-credentials.ts';
import { plugins } from './plugins.ts';
import { routes } from './routes.ts';
import { services } from './services.ts';
import { snis } from './snis.ts';

/**
 * The entity types the local gateway runs, in dependency order (a type's foreign keys point to
 * types before it: checked below). Adding one is adding its definition here; the store, the entity
 * service, the Admin API's endpoints, `/schemas`, kong.yml's loader and sync, and the snapshot
 * (and its schema, generated) follow.
 */
export const ENTITIES = {
  // kong.yml lists certificates before services (decK's order), which may reference them.
  certificates,
  snis,
  ca_certificates: caCertificates,
  services,
  routes,
  consumers,
  keyauth_credentials: keyauthCredentials,
  acls,
  plugins,
} as const;

export type EntityName = keyof typeof ENTITIES;
export type EntityTypes = { [N in EntityName]: EntityOf<(typeof ENTITIES)[N]> };
export type AnyEntity = EntityTypes[EntityName];
export const ENTITY_NAMES = Object.keys(ENTITIES) as EntityName[];

export const isEntityName = (name: string): name is EntityName => Object.hasOwn(ENTITIES, name);

/** The definition of a type, seen without its field types (for code that treats every type alike). */
export const definitionOf = (name: EntityName): RunDefinition => ENTITIES[name];

export interface ForeignField {
  field: string;
  /** The type referenced. */
  reference: EntityName;
  /** What deleting the referenced entity does to this one. */
  onDelete: 'cascade' | 'restrict';
}

/** The foreign fields of a type that reference a type the gateway runs, in the schema's order. */
export function foreignFields(definition: EntityDefinition): ForeignField[] {
  return Object.entries(definition.schema.properties).flatMap(([field, schema]) => {
    const { attributes } = kongField(schema);
    const reference = attributes.reference;
    return attributes.type === 'foreign' && reference !== undefined && isEntityName(reference)
      ? [{ field, reference, onDelete: attributes.on_delete ?? 'restrict' }]
      : [];
  });
}

// Dependency order is what the sync creates in, and deletes against (children first).
ENTITY_NAMES.forEach((name, index) => {
  for (const { field, reference } of foreignFields(definitionOf(name))) {
    if (ENTITY_NAMES.indexOf(reference) >= index) throw new Error(`ENTITIES: ${name}.${field} references ${reference}, which must be listed before ${name}`);
  }
});

export type { Acl } from './acls.ts';
export type { Consumer } from './consumers.ts';
export type { KeyAuthCredential } from './keyauth-credentials.ts';
export type { Plugin } from './plugins.ts';
export type { Route } from './routes.ts';
export type { Service } from './services.ts';
export type { ForeignKey } from '../typedefs.ts';
