import type { Static, TObject, TProperties } from '@sinclair/typebox';
import type { FieldErrors } from './validate.ts';

/**
 * One entity type as Kong declares it (kong/db/schema/entities/*.lua, a plugin's daos.lua): its
 * fields, keys and checks. The store, the entity service, the Admin API's router, `/schemas` and
 * the declarative loader all read it; adding a field or an entity type is an edit here.
 */
export interface EntityDefinition<P extends TProperties = TProperties> {
  name: string;
  schema: TObject<P>;
  primary_key: readonly string[];
  /** What `/{entities}/{key}` looks up when the key is not a UUID. */
  endpoint_key?: keyof P & string;
  /** Fields whose values together are unique (Kong's cache_key, checked on write). */
  cache_key?: ReadonlyArray<keyof P & string>;
  /** The Admin API's path names when they differ from `name` (key-auths, /consumers/{c}/key-auth). */
  admin_api_name?: string;
  admin_api_nested_name?: string;
  /** Kong's `ttl = true`: rows expire; the Admin API takes `ttl` as an option and reads back the time left. */
  ttl?: boolean;
  subschema_key?: keyof P & string;
  /** Kong's entity_checks, and the ones the local gateway's data plane needs: errors by field path. */
  check?(entity: Static<TObject<P>>, errors: FieldErrors): void;
  /**
   * The subschema chosen by `subschema_key` (a plugin's, by name): validates and completes the
   * entity's abstract field in place.
   */
  subschema?(entity: Static<TObject<P>>, errors: FieldErrors, subschemas: Subschemas): void;
  /** Kong's shorthand_fields: input names expanded into fields before validation. */
  shorthands?: Readonly<Record<string, (value: unknown, errors: FieldErrors) => Partial<Record<keyof P & string, unknown>>>>;
  /** Fields of Kong's schema the local gateway cannot run: refused when set, with the reason. */
  unsupported?: Readonly<Partial<Record<keyof P & string, string>>>;
  /** Input names outside this schema that Kong has in other configurations (router flavors): refused with the reason. */
  refusedInput?: Readonly<Record<string, string>>;
}

/** The plugins' config schemas, as the plugin registry holds them. */
export interface Subschemas {
  validateConfig(
    name: string,
    config: unknown,
    scope: { consumer: boolean; route: boolean; service: boolean },
    errors: FieldErrors,
  ): Record<string, unknown>;
}

export type EntityOf<D> = D extends EntityDefinition<infer P> ? Static<TObject<P>> : never;

export function defineEntity<P extends TProperties>(definition: EntityDefinition<P>): EntityDefinition<P> {
  return definition;
}
