import type { EntityDefinition, EntityOf } from '../entity.ts';
import { acls } from './acls.ts';
import { consumers } from './consumers.ts';
import { keyauthCredentials } from './keyauth-credentials.ts';
import { plugins } from './plugins.ts';
import { routes } from './routes.ts';
import { services } from './services.ts';

/**
 * The entity types the local gateway runs, in dependency order (a type's foreign keys point to
 * types before it). Adding one is adding its definition here; the store, the entity service, the
 * Admin API's endpoints and `/schemas` follow.
 */
export const ENTITIES = {
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
export const definitionOf = (name: EntityName): EntityDefinition => ENTITIES[name];

export type { Acl } from './acls.ts';
export type { Consumer } from './consumers.ts';
export type { KeyAuthCredential } from './keyauth-credentials.ts';
export type { Plugin } from './plugins.ts';
export type { Route } from './routes.ts';
export type { Service } from './services.ts';
export type { ForeignKey } from '../typedefs.ts';
