import { randomBytes, randomUUID } from 'node:crypto';
import type { TProperties } from '@sinclair/typebox';
import type { EntityDefinition, Subschemas } from '../schema/entity.ts';
import { ENTITY_NAMES, definitionOf, foreignFields, type AnyEntity, type EntityName, type EntityTypes } from '../schema/entities/index.ts';
import { updateErrors, validateEntityInput, type Input } from '../schema/entity-validation.ts';
import { ForeignKeyViolation, ForeignKeysUnresolved, InvalidOption, InvalidPrimaryKey, InvalidUnique, KongError, NotFound, PrimaryKeyViolation, UniqueViolation, refuseInvalid } from '../schema/errors.ts';
import { isUuid, kongField } from '../schema/typedefs.ts';
import { isPlainObject, validateField, type FieldErrors } from '../schema/validate.ts';
import { checkNameList, replaceNameList, snisOf } from './certificate-snis.ts';
import type { Draft, EntityStore, Snapshot } from './entity-store.ts';

/** Reads see the committed state or a write's draft alike. */
export type View = Pick<Snapshot, 'get' | 'list'>;

/** A nested endpoint's parent: `/services/{key}/routes` is `{ field: 'service', key }` for routes. */
export interface Parent {
  field: string;
  key: string;
}

export interface WriteOptions {
  parent?: Parent;
  /** Kong's `ttl` option for ttl-enabled types: seconds to live; absent or 0: forever. */
  ttl?: number;
}

/** How a write treats an existing entity: Kong's insert, update (PATCH) and upsert (PUT). */
type Mode = 'insert' | 'update' | 'upsert';

const seconds = (ms: number) => Math.floor(ms / 1000);

const fieldsOf = (entity: AnyEntity): Input => entity;
const idOf = (value: unknown): string | undefined => (isPlainObject(value) && typeof value.id === 'string' ? value.id : undefined);

/**
 * Kong's DAO (kong/db/dao/init.lua) for every entity type the gateway runs: select by id or
 * endpoint key, page, insert, update (PATCH), upsert (PUT) and delete, with Kong's defaults,
 * foreign keys, unique fields, cascades and ttl. The Admin API and kong.yml's sync both write
 * through it, so each rule is here once; each write is one store write, validated whole before
 * the store commits it.
 */
export class EntityService {
  /**
   * `admit` sees the state every write would commit, after the service's own checks: a throw
   * refuses the write before anything is stored (the control plane compiles the snapshot there).
   */
  constructor(
    private readonly store: EntityStore,
    readonly subschemas: Subschemas,
    private readonly now: () => number,
    private readonly admit: (draft: Draft) => void = () => undefined,
  ) {}

  /** One store write through the service: `change` on a draft, admitted whole or not at all. */
  transaction<R>(change: (draft: Draft) => R): Promise<R> {
    return this.store.write((draft) => {
      const result = change(draft);
      if (draft.changed.size > 0) this.admit(draft);
      return result;
    });
  }

  get view(): Snapshot {
    return this.store.snapshot;
  }

  // reads ----------------------------------------------------------------------------------------

  /**
   * Kong's rule for `/{entities}/{key}`: a UUID is looked up by id only, anything else by the
   * endpoint key (kong/api/endpoints.lua query_entity). Expired ttl rows are not found.
   */
  select<N extends EntityName>(name: N, key: string, view: View = this.view): EntityTypes[N] | undefined {
    const definition = definitionOf(name);
    const endpointKey = definition.endpoint_key;
    if (!isUuid(key)) {
      // a type without an endpoint key is named by its id only (kong/db/dao/init.lua:1006-1011: validate_primary_key)
      if (!endpointKey) throw new InvalidPrimaryKey();
      checkEndpointKey(definition, endpointKey, key);
    }
    const found = isUuid(key)
      ? view.get(name, key)
      : endpointKey
        ? view.list(name).find((entity) => fieldsOf(entity)[endpointKey] === key)
        : undefined;
    return found && this.live(name, found) ? found : undefined;
  }

  /** Every live entity of a type, optionally only those whose `field` references `parentId`. */
  list<N extends EntityName>(name: N, filter?: { field: string; id: string }, view: View = this.view): Array<EntityTypes[N]> {
    return view.list(name).filter((entity) => this.live(name, entity) && (!filter || idOf(fieldsOf(entity)[filter.field]) === filter.id));
  }

  /** Kong's ttl_select_where: a row past its ttl is gone for reads. */
  private live(name: EntityName, entity: AnyEntity): boolean {
    if (!definitionOf(name).ttl) return true;
    const expiresAt = fieldsOf(entity).expires_at;
    return typeof expiresAt !== 'number' || expiresAt > this.now();
  }

  /** The parent a nested endpoint names, or NotFound (kong/api/endpoints.lua: not_found()). */
  parentOf(name: EntityName, parent: Parent, view: View = this.view): AnyEntity {
    const reference = foreignFields(definitionOf(name)).find((f) => f.field === parent.field)?.reference;
    const entity = reference && this.select(reference, parent.key, view);
    if (!entity) throw new NotFound();
    return entity;
  }

  /** The entity at `key`, within its parent when nested; NotFound otherwise. */
  find<N extends EntityName>(name: N, key: string, parent?: Parent, view: View = this.view): EntityTypes[N] {
    const owner = parent && this.parentOf(name, parent, view);
    const entity = this.select(name, key, view);
    if (!entity || (owner && parent && idOf(fieldsOf(entity)[parent.field]) !== owner.id)) throw new NotFound();
    return entity;
  }

  /** An entity's fields as Kong's schema has them (internal ones left out, transient ones not stored). */
  private stored(name: EntityName, entity: AnyEntity): Input {
    const output: Input = {};
    for (const [field, schema] of Object.entries(definitionOf(name).schema.properties)) {
      const { attributes } = kongField(schema);
      if (!attributes.internal && !attributes.transient) output[field] = fieldsOf(entity)[field];
    }
    return output;
  }

  /**
   * What the Admin API answers for an entity: internal fields left out; a ttl row's ttl is the
   * time left; a certificate with its SNIs' names (kong/db/dao/certificates.lua).
   */
  present(name: EntityName, entity: AnyEntity, view: View = this.view): Input {
    const output = this.stored(name, entity);
    const plugin = this.subschemaOf(name, output);
    if (plugin !== undefined && isPlainObject(output.config)) output.config = this.subschemas.presentConfig(plugin, output.config);
    if (name === 'certificates') output.snis = snisOf(view, entity.id);
    if (definitionOf(name).ttl) {
      // kong/db/strategies/postgres/init.lua: FLOOR(EXTRACT(EPOCH FROM (ttl - CURRENT_TIMESTAMP))).
      const expiresAt = fieldsOf(entity).expires_at;
      output.ttl = typeof expiresAt === 'number' ? Math.max(0, Math.floor((expiresAt - this.now()) / 1000)) : null;
    }
    return output;
  }

  /** `/schemas/{entity}/validate`: the input checked as a write would check it, nothing stored. */
  validate(name: EntityName, input: unknown): void {
    const given = isPlainObject(input) ? this.withoutOptions(name, input).input : input;
    refuseInvalid(validateEntityInput(definitionOf(name), given, this.subschemas).errors);
  }

  // writes ---------------------------------------------------------------------------------------

  /** POST /{entities} and /{parents}/{key}/{entities}. */
  insert<N extends EntityName>(name: N, input: Input, options: WriteOptions = {}): Promise<EntityTypes[N]> {
    return this.transaction((draft) => {
      const given = this.scoped(draft, name, input, options.parent, 'insert');
      return this.write(draft, name, given, undefined, { ...options, mode: 'insert' });
    });
  }

  /** PATCH: the stored fields with the given ones over them; records (a plugin's config) merged. */
  update<N extends EntityName>(name: N, key: string, input: Input, options: WriteOptions = {}): Promise<EntityTypes[N]> {
    return this.transaction((draft) => {
      const existing = this.find(name, key, options.parent, draft);
      const given = this.scoped(draft, name, input, options.parent, 'update');
      const stored = this.stored(name, existing);
      // The patch's shorthands are expanded on their own, before the merge (kong/db/dao/init.lua:506-537:
      // process_auto_fields(entity, "update")), so a redis_host given replaces the stored redis.host.
      const plugin = this.subschemaOf(name, given) ?? this.subschemaOf(name, stored);
      if (plugin !== undefined && isPlainObject(given.config)) {
        const errors: FieldErrors = {};
        given.config = this.subschemas.expandShorthands(plugin, given.config, errors);
        refuseInvalid(errors);
      }
      const merged = mergeValues(this.fieldsOf(name, stored), given, stored);
      return this.write(draft, name, merged, existing, { ...options, mode: 'update' });
    });
  }

  /**
   * An entity's fields as its stored values resolve them (kong/db/schema/init.lua:2245-2263
   * each_field): a plugin's abstract `config` is its plugin's config record.
   */
  private fieldsOf(name: EntityName, values: Input): TProperties {
    const key = this.subschemaOf(name, values);
    const config = key === undefined ? undefined : this.subschemas.configSchema(key);
    return config ? { ...definitionOf(name).schema.properties, config } : definitionOf(name).schema.properties;
  }

  /** The subschema an entity's values name (a plugin's name), if its type has subschemas. */
  private subschemaOf(name: EntityName, values: Input): string | undefined {
    const key = definitionOf(name).subschema_key;
    const value = key === undefined ? undefined : values[key];
    return typeof value === 'string' ? value : undefined;
  }

  /**
   * PUT: creates or replaces the entity the URL names, by id when the key is a UUID, else by
   * endpoint key (kong/db/dao/init.lua upsert, upsert_by_<endpoint_key>).
   */
  upsert<N extends EntityName>(name: N, key: string, input: Input, options: WriteOptions = {}): Promise<EntityTypes[N]> {
    return this.transaction((draft) => {
      const endpointKey = definitionOf(name).endpoint_key;
      if (!isUuid(key) && !endpointKey) throw new InvalidPrimaryKey();
      // Under a parent (`PUT /consumers/bob/key-auth/{key}`) the row is upserted with the parent
      // as its owner, whichever it had: put_entity_endpoint sets the foreign key and upserts, with
      // no check of the current one (kong/api/endpoints.lua:521-547), so another consumer's
      // credential moves to this one.
      const live = this.select(name, key, draft);
      // A row past its ttl still holds its key until the cleanup deletes it; Kong's
      // upsert_by_<key> is INSERT … ON CONFLICT (<key>) DO UPDATE (postgres/init.lua:1476-1487),
      // which takes that row over, id and all, whichever consumer it had.
      const holder = endpointKey && !isUuid(key) ? draft.list(name).find((entity) => fieldsOf(entity)[endpointKey] === key) : undefined;
      const existing = live ?? holder;
      const given = this.scoped(draft, name, input, options.parent, 'upsert');
      if (isUuid(key)) {
        given.id = key;
      } else if (endpointKey) {
        // The URL's key wins over the body's (check_upsert: entity_to_upsert[name] = key).
        given[endpointKey] = key;
        if (existing) given.id = existing.id;
      }
      return this.write(draft, name, given, existing, { ...options, mode: 'upsert' });
    });
  }

  /**
   * PUT /{entities}/{key}/{field} (`/routes/{route}/service`): upserts the entity the foreign key
   * references; when there is none yet, creates it and points the foreign key at it
   * (kong/api/endpoints.lua put_entity_endpoint, `associate`).
   */
  upsertReferenced(name: EntityName, key: string, field: string, input: Input): Promise<AnyEntity> {
    return this.transaction((draft) => {
      const entity = this.find(name, key, undefined, draft);
      const reference = foreignFields(definitionOf(name)).find((f) => f.field === field)?.reference;
      if (!reference) throw new NotFound();
      const current = idOf(fieldsOf(entity)[field]);
      const existing = current === undefined ? undefined : draft.get(reference, current);
      const referenced = this.write(draft, reference, { ...input, id: current ?? randomUUID() }, existing, { mode: 'upsert' });
      if (current === undefined) this.write(draft, name, { ...this.stored(name, entity), [field]: { id: referenced.id } }, entity, { mode: 'update' });
      return referenced;
    });
  }

  /**
   * Kong's ttl cleanup timer (kong/db/strategies/postgres/connector.lua:310-380): deletes every
   * row past its ttl. Until it runs, such a row is hidden from reads (and from DELETE, which
   * selects first) but its id and unique fields stay taken.
   */
  purgeExpired(): Promise<void> {
    return this.transaction((draft) => {
      for (const name of ENTITY_NAMES) {
        if (!definitionOf(name).ttl) continue;
        for (const entity of draft.list(name)) if (!this.live(name, entity)) this.remove(draft, name, entity.id);
      }
    });
  }

  /** DELETE: a missing entity is not an error at the top level; a nested one is NotFound. */
  delete(name: EntityName, key: string, options: { parent?: Parent } = {}): Promise<void> {
    return this.transaction((draft) => {
      const existing = options.parent ? this.find(name, key, options.parent, draft) : this.select(name, key, draft);
      if (existing) this.remove(draft, name, existing.id);
    });
  }

  /** Deletes an entity and, as Kong's on_delete says, cascades or refuses for what references it. */
  remove(draft: Draft, name: EntityName, id: string): void {
    for (const other of ENTITY_NAMES) {
      for (const { field, reference, onDelete } of foreignFields(definitionOf(other))) {
        if (reference !== name) continue;
        const referencing = draft.list(other).filter((entity) => idOf(fieldsOf(entity)[field]) === id);
        if (referencing.length > 0 && onDelete === 'restrict') throw ForeignKeyViolation.referencedBy(other, name);
        for (const entity of referencing) this.remove(draft, other, entity.id);
      }
    }
    draft.delete(name, id);
  }

  /**
   * The one path of every write: the input validated as Kong's schema says, auto fields filled,
   * foreign keys resolved and checked, unique fields and cache keys checked, then put in the draft.
   * `keep` carries an existing row's state a re-sync must not reset (a credential's expiry).
   */
  write<N extends EntityName>(
    draft: Draft,
    name: N,
    input: Input,
    existing: EntityTypes[N] | undefined,
    options: WriteOptions & { mode: Mode; keepExpiry?: boolean },
  ): EntityTypes[N] {
    const definition = definitionOf(name);
    const { input: given, ttl } = this.withoutOptions(name, input, options.ttl);
    const errors: FieldErrors = {};
    this.resolveForeign(draft, definition, given, errors);
    if (Object.keys(errors).length > 0) throw new ForeignKeysUnresolved(errors);
    if (name === 'certificates') checkNameList(draft, given.snis, options.mode === 'insert' ? undefined : existing?.id);
    const { fields, errors: invalid } = validateEntityInput(definition, given, this.subschemas);
    refuseInvalid(options.mode === 'update' ? updateErrors(invalid) : invalid);
    const record: Input = fields;
    // A certificate's snis are not stored with it: given (null: none), they replace its SNIs (certificates.lua).
    let snis: string[] | undefined;
    if (name === 'certificates') {
      if (given.snis !== undefined) snis = (record.snis as string[] | null) ?? [];
      delete record.snis;
    }
    const nowMs = this.now();
    for (const [field, schema] of Object.entries(definition.schema.properties)) {
      const { attributes } = kongField(schema);
      if (attributes.internal) record[field] = existing ? fieldsOf(existing)[field] : null;
      if (!attributes.auto) continue;
      if (attributes.uuid) record[field] = existing?.id ?? (isUuid(record[field]) ? record[field] : randomUUID());
      // process_auto_fields (kong/db/schema/init.lua:1897-1917): a created_at given is kept, else an
      // insert or upsert stamps it now (a PUT of an existing row too: the upsert sets
      // created_at = EXCLUDED.created_at, postgres/init.lua:955-960); updated_at is always now.
      else if (field === 'created_at') record[field] = record[field] ?? seconds(nowMs);
      else if (field === 'updated_at') record[field] = seconds(nowMs);
      // Kong's auto strings are random (kong/db/schema/init.lua: utils.random_string): 32 hex.
      else if (attributes.type === 'string') record[field] = record[field] ?? randomBytes(16).toString('hex');
    }
    if (definition.ttl) {
      // The row expires ttl seconds after its created_at, or after now for a PATCH
      // (postgres/init.lua:351-377 get_ttl_value); a PATCH without a ttl keeps the row's
      // (:443-445: the column set to itself). A re-sync of kong.yml keeps the deadline it had.
      const since = options.mode === 'update' ? seconds(nowMs) : Number(record.created_at);
      const kept = existing ? fieldsOf(existing).expires_at : null;
      if (ttl === undefined && options.mode === 'update') record.expires_at = kept;
      else record.expires_at = ttl ? (options.keepExpiry && typeof kept === 'number' ? kept : (since + ttl) * 1000) : null;
    }
    if (options.mode === 'insert' && draft.get(name, String(record.id))) throw insertedIdTaken(name, definition, record);
    this.checkForeign(draft, definition, record);
    this.checkUnique(draft, name, definition, record);
    const entity = record as unknown as EntityTypes[N];
    draft.put(name, entity);
    if (snis) {
      replaceNameList(
        draft,
        entity.id,
        snis,
        (sni) => this.write(draft, 'snis', { name: sni, certificate: { id: entity.id } }, undefined, { mode: 'insert' }),
        (id) => this.remove(draft, 'snis', id),
      );
    }
    return entity;
  }

  /** Kong's `ttl` is an option of ttl-enabled types, not a field (kong/api/endpoints.lua extract_options). */
  private withoutOptions(name: EntityName, input: Input, ttlOption?: number): { input: Input; ttl: number | undefined } {
    if (!definitionOf(name).ttl || input.ttl === undefined) return { input, ttl: ttlOption };
    const { ttl, ...rest } = input;
    // an option, checked before the entity (kong/db/dao/init.lua:196-201 validate_options_value, :444-451)
    if (ttl !== null && (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0 || ttl > 100000000)) {
      throw new InvalidOption('ttl', 'must be an integer between 0 and 100000000');
    }
    return { input: rest, ttl: typeof ttl === 'number' ? ttl : undefined };
  }

  /** A nested endpoint's parent as the foreign key of the input (kong/api/endpoints.lua). */
  private scoped(draft: Draft, name: EntityName, input: Input, parent: Parent | undefined, mode: Mode): Input {
    if (!parent) return { ...input };
    const owner = this.parentOf(name, parent, draft);
    // PATCH keeps a foreign key the body sets; POST and PUT pin it to the URL's parent.
    if (mode === 'update' && input[parent.field] !== undefined) return { ...input };
    return { ...input, [parent.field]: { id: owner.id } };
  }

  /**
   * A foreign key given without a valid primary key is looked up by the referenced type's unique
   * fields, as Kong's DAO resolve_foreign does (`{ "name": "svc" }`); a whole entity is its id.
   */
  private resolveForeign(draft: Draft, definition: EntityDefinition, input: Input, errors: FieldErrors): void {
    for (const { field, reference } of foreignFields(definition)) {
      const value = input[field];
      if (!isPlainObject(value) || isUuid(value.id)) continue;
      const target = definitionOf(reference);
      const keys = Object.entries(target.schema.properties)
        .filter(([key, schema]) => kongField(schema).attributes.unique || key === target.endpoint_key)
        .map(([key]) => key)
        .filter((key) => typeof value[key] === 'string');
      for (const key of keys) {
        const found = draft.list(reference).find((entity) => fieldsOf(entity)[key] === value[key]);
        if (found) {
          input[field] = { id: found.id };
          break;
        }
        errors[`${field}.${key}`] = `the foreign key cannot be resolved with '{${key}="${String(value[key])}"}' for an existing '${reference}' entity`;
      }
    }
  }

  /** Every foreign key names an existing entity (foreign key violation otherwise). */
  private checkForeign(draft: Draft, definition: EntityDefinition, record: Input): void {
    for (const { field, reference } of foreignFields(definition)) {
      const id = idOf(record[field]);
      if (id !== undefined && !draft.get(reference, id)) throw ForeignKeyViolation.missing(field, reference, { id });
    }
  }

  /** Unique fields, the endpoint key and the cache key are unique across the type (409 otherwise). */
  private checkUnique(draft: Draft, name: EntityName, definition: EntityDefinition, record: Input): void {
    const others = draft.list(name).filter((entity) => entity.id !== record.id);
    for (const [field, schema] of Object.entries(definition.schema.properties)) {
      const value = record[field];
      if (value === null || value === undefined) continue;
      if (!kongField(schema).attributes.unique && field !== definition.endpoint_key) continue;
      if (others.some((entity) => fieldsOf(entity)[field] === value)) throw new UniqueViolation({ [field]: value });
    }
    const cacheKey = definition.cache_key;
    if (cacheKey && cacheKey.length > 1) {
      const key = (entity: Input) => JSON.stringify(cacheKey.map((field) => idOf(entity[field]) ?? entity[field] ?? null));
      const mine = key(record);
      if (others.some((entity) => key(fieldsOf(entity)) === mine)) {
        throw new UniqueViolation(Object.fromEntries(cacheKey.map((field) => [field, record[field] ?? null])));
      }
    }
  }
}

/**
 * Kong's merge_values (kong/db/schema/init.lua:2035-2059, 3.9.3), how a PATCH meets the stored
 * entity: the given fields over the stored ones, a record merged field by field however deep;
 * anything else given (arrays, sets, maps, null) replaces what was stored.
 */
function mergeValues(fields: TProperties | undefined, top: Input, bottom: unknown): Input {
  if (!isPlainObject(bottom)) return { ...top };
  const output: Input = { ...bottom, ...top };
  for (const [key, value] of Object.entries(top)) {
    const schema = fields?.[key];
    const attributes = schema && kongField(schema).attributes;
    if (attributes?.type === 'record' && !attributes.abstract && isPlainObject(value)) output[key] = mergeValues(attributes.fields, value, bottom[key]);
  }
  return output;
}

/**
 * Kong inserts with a plain INSERT (postgres/init.lua:1150-1160): a taken id fails in PostgreSQL
 * with `duplicate key value violates unique constraint "<table>_pkey"`, which toerror
 * (postgres/init.lua:229-267) reads as a violation of the first unique field whose name the
 * message holds (a key-auth credential's `key`, from "duplicate key"), else of the primary key.
 * The unique index is checked as the row goes in, before the foreign keys.
 */
function insertedIdTaken(name: EntityName, definition: EntityDefinition, record: Input): KongError {
  const message = `duplicate key value violates unique constraint "${name}_pkey"`;
  for (const [field, schema] of Object.entries(definition.schema.properties)) {
    if (kongField(schema).attributes.unique && message.includes(field)) return new UniqueViolation({ [field]: record[field] ?? null });
  }
  return new PrimaryKeyViolation({ id: record.id });
}

/**
 * A key the URL gives for the endpoint key is validated as that field before any lookup, read,
 * update, upsert or delete alike (kong/db/dao/init.lua:349-371, 3.9.3): `GET /services/a%20b`
 * is 400 invalid unique name, not 404.
 */
function checkEndpointKey(definition: EntityDefinition, endpointKey: string, key: string): void {
  const field = definition.schema.properties[endpointKey];
  if (field === undefined) return;
  const errors: FieldErrors = {};
  validateField(field, key, endpointKey, errors);
  const message = errors[endpointKey];
  if (message !== undefined) throw new InvalidUnique(endpointKey, message);
}
