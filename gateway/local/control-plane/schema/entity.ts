import type { Static, TObject, TProperties, TSchema } from '@sinclair/typebox';
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
  /** Kong's `transformations` run on write: fields computed from others once the entity is valid (a CA's cert_digest). */
  transform?(entity: Static<TObject<P>>): void;
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
  /** Where the type's entities are in kong.yml, and how a sync finds them again (every type the gateway runs has one). */
  declarative?: DeclarativeForm<keyof P & string>;
}

/** How kong.yml (decK's format 3.0) gives entities of a type. */
interface DeclarativeForm<Field extends string = string> {
  /**
   * decK's natural key: the fields that find a declared entity in the store again, so that it
   * keeps its id. Alternatives in order: the first one the file sets any field of decides (a
   * consumer: username, else custom_id); a foreign field compares the entity it references.
   * A one-field alternative is also how other entries of the file reference this one by name.
   */
  key: ReadonlyArray<ReadonlyArray<Field>>;
  /** The file must give the (one-field) key: without it a sync could not find the entity again. */
  keyRequired?: boolean;
  /** The key is a secret (a credential's): messages never show it. */
  secretKey?: boolean;
  /** Entries may be a top-level list of kong.yml; `requires`: a foreign field such an entry must name. */
  topLevel?: boolean | { requires: Field };
  /**
   * Foreign fields under whose referenced type this type is nested in kong.yml, as a list named
   * like this type, filling the field (`routes` under `services` fills `service`).
   */
  nestedIn?: ReadonlyArray<Field>;
}

/** The plugins' config schemas, as the plugin registry holds them. */
export interface Subschemas {
  /** A plugin's config schema, by the plugin's name; undefined for a plugin the gateway does not run. */
  configSchema(name: string): TSchema | undefined;
  /**
   * Entity fields the subschema declares anew (a plugin's `protocols`): they replace the entity's,
   * as kong/db/schema/init.lua:1120-1131 (resolve_field) reads them.
   */
  fields(name: string): TProperties | undefined;
  validateConfig(
    name: string,
    config: unknown,
    scope: { consumer: boolean; route: boolean; service: boolean },
    errors: FieldErrors,
  ): Record<string, unknown>;
  /** A config with its plugin's deprecated shorthands moved to the fields replacing them (errors keyed `config.<shorthand>`). */
  expandShorthands(name: string, config: unknown, errors: FieldErrors): unknown;
  /** A stored config as Kong answers it: each deprecated shorthand beside the field replacing it, with its value. */
  presentConfig(name: string, config: Record<string, unknown>): Record<string, unknown>;
}

export type EntityOf<D> = D extends EntityDefinition<infer P> ? Static<TObject<P>> : never;

/**
 * What the data plane receives of a type: the snapshot compiler sends it, and
 * snapshot.schema.json (which the data plane checks every snapshot against) is generated from it
 * and the fields' schemas. A foreign field is sent as `{ "id": … }`.
 */
interface Projection<Field extends string = string> {
  /** The fields sent, in this order (the order is part of the configuration's hash). */
  fields: readonly Field[];
  /** Kong's runtime value for a field stored null (what its balancer or router reads): sent instead of null. */
  fallback?: Readonly<Partial<Record<Field, string | number | boolean>>>;
  /** What the data plane runs, where narrower than Kong's schema: a field schema built with typedefs. */
  narrow?: Readonly<Partial<Record<Field, TSchema>>>;
  /** The value sent for a value stored (never null), where they differ. */
  convert?: Readonly<Partial<Record<Field, (stored: never) => unknown>>>;
  /** For snapshot.schema.json: what the data plane does with it. */
  description?: string;
}

/** A type the gateway runs, not only describes: kong.yml gives it, and the data plane receives the fields `F`. */
export type RunDefinition<P extends TProperties = TProperties, F extends keyof P & string = keyof P & string> = EntityDefinition<P> & {
  declarative: DeclarativeForm<keyof P & string>;
  snapshot?: Projection<F>;
};

/** An entity as the data plane receives it. */
export type SnapshotOf<D> =
  D extends RunDefinition<infer P, infer F> ? (Static<TObject<P>> extends infer E ? { [K in F & keyof E]: E[K] } : never) : never;

export function defineEntity<P extends TProperties, const F extends keyof P & string = never>(
  definition: RunDefinition<P, F>,
): RunDefinition<P, F>;
export function defineEntity<P extends TProperties>(definition: EntityDefinition<P>): EntityDefinition<P>;
export function defineEntity<P extends TProperties>(definition: EntityDefinition<P>): EntityDefinition<P> {
  return definition;
}
