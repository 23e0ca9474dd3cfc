import type { EntityService } from '../db/entity-service.ts';
import type { Draft } from '../db/entity-store.ts';
import type { RunDefinition } from '../schema/entity.ts';
import { ENTITY_NAMES, definitionOf, foreignFields, type AnyEntity, type EntityName, type EntityTypes, type ForeignField } from '../schema/entities/index.ts';
import { KongError, SchemaViolation } from '../schema/errors.ts';
import { DeclarativeConfigError, type Declared, type DeclarativeConfig } from './load-config.ts';

export interface SyncSummary {
  created: number;
  updated: number;
  deleted: number;
}

/** An entity carries every select tag: it belongs to the declarative file's scope. */
export function inScope(tags: string[] | null, selectTags: readonly string[]): boolean {
  return selectTags.every((tag) => tags?.includes(tag));
}

/** JSON with object keys sorted: rows stored by an older version list their fields in another order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

const withoutTimes = (entity: AnyEntity): string => {
  const { created_at: _c, updated_at: _u, ...rest } = entity as AnyEntity & { updated_at?: number };
  return canonical(rest);
};

/** A problem of one declared entity, as `where: field: message` lines. */
function problemsOf(where: string, error: unknown): string[] {
  if (error instanceof SchemaViolation) {
    const entityLevel = /(^|\.)@entity(\.\d+)?$/;
    return Object.entries(error.errors).map(([field, message]) => (entityLevel.test(field) ? `${where}: ${message}` : `${where}: ${field}: ${message}`));
  }
  if (error instanceof KongError) return [`${where}: ${error.message}`];
  throw error;
}

/**
 * The ids of what an entry references, by foreign field; undefined when one is not in the file
 * (a problem, unless the entry is nested under it: its parent's own problem is reported).
 */
type Ids = Record<EntityName, Map<string, string>>;

function resolveReferences(declared: Declared, foreign: ForeignField[], ids: Ids, problems: string[]): Record<string, string> | undefined {
  const references: Record<string, string> = {};
  for (const { field, reference } of foreign) {
    const ref = declared.refs[field];
    if (ref === undefined) continue;
    const id = ids[reference].get(ref);
    if (id === undefined) {
      if (declared.nestedIn !== field) problems.push(`${declared.where}: ${field} '${ref}' is not in the file`);
      return undefined;
    }
    references[field] = id;
  }
  return references;
}

/**
 * Whether a stored entity is the one an entry declares: equal on the first alternative of the
 * type's natural key that the entry sets a field of (a foreign field compares the id referenced).
 */
function matchesKey(
  key: ReadonlyArray<readonly string[]>,
  foreign: ForeignField[],
  stored: AnyEntity,
  input: Record<string, unknown>,
  references: Record<string, string>,
): boolean {
  const isForeign = (field: string) => foreign.some((f) => f.field === field);
  const declaredValue = (field: string) => (isForeign(field) ? references[field] : input[field]) ?? null;
  const storedValue = (field: string) => {
    const value = (stored as Record<string, unknown>)[field] ?? null;
    return isForeign(field) && value !== null ? (value as { id: string }).id : value;
  };
  const alternative = key.find((fields) => fields.some((field) => declaredValue(field) !== null));
  return alternative !== undefined && alternative.every((field) => storedValue(field) === declaredValue(field));
}

/** `group 'gold' is already declared for this consumer`: the natural key's own fields (a secret one without its value). */
function declaredTwice(definition: RunDefinition, foreign: ForeignField[], declared: Declared): string {
  const { key, secretKey } = definition.declarative;
  const given = (field: string) => declared.input[field] != null || declared.refs[field] !== undefined;
  const alternative = key.find((fields) => fields.some(given)) ?? [];
  const own = alternative.filter((field) => !foreign.some((f) => f.field === field) && declared.input[field] != null);
  const named = own.map((field) => (secretKey ? field : `${field} '${String(declared.input[field])}'`)).join(', ') || 'this entity';
  const parent = foreign.find((f) => f.field === declared.nestedIn)?.reference;
  return `${named} is already declared ${parent ? `for this ${parent.replace(/s$/, '')}` : 'in the file'}`;
}

/**
 * Makes the store match kong.yml the way `deck gateway sync --select-tag` makes Kong match it:
 * entities tagged with every select tag are created, updated or deleted to equal the file;
 * entities without those tags (e.g. consumers created through the Admin API) are left alone.
 * Entities are matched by their type's natural key (its definition's `declarative.key`) and keep their ids.
 * Each is written through the entity service, so kong.yml meets the Admin API's rules; every
 * problem is collected, and any refuses the whole file (DeclarativeConfigError).
 */
export function syncDeclarative(draft: Draft, config: DeclarativeConfig, service: EntityService): SyncSummary {
  const { selectTags } = config;
  const summary: SyncSummary = { created: 0, updated: 0, deleted: 0 };
  const kept = new Set<string>();
  const problems: string[] = [];
  // Each type's entities by the names the file may give them (one-field keys) and by id.
  const ids = Object.fromEntries(ENTITY_NAMES.map((name) => [name, new Map<string, string>()])) as Ids;

  const upsert = <N extends EntityName>(
    name: N,
    declared: Declared,
    references: Record<string, string>,
    existing: EntityTypes[N] | undefined,
  ): EntityTypes[N] | undefined => {
    if (existing && !inScope(existing.tags, selectTags)) {
      problems.push(`${declared.where}: an entity with the same key exists outside the select tags [${selectTags.join(', ')}]; decK would refuse to create it`);
      return undefined;
    }
    // An entity kong.yml declares again keeps its id and created_at.
    const input: Record<string, unknown> = { ...declared.input, ...(existing ? { id: existing.id, created_at: existing.created_at } : {}) };
    for (const [field, id] of Object.entries(references)) input[field] = { id };
    try {
      const entity = service.write(draft, name, input, existing, { mode: 'upsert', keepExpiry: existing !== undefined });
      if (!existing) summary.created += 1;
      else if (withoutTimes(existing) !== withoutTimes(entity)) summary.updated += 1;
      // An unchanged entity keeps its updated_at: a reload that changes nothing changes nothing.
      else draft.put(name, existing);
      kept.add(`${name}:${entity.id}`);
      return entity;
    } catch (error) {
      problems.push(...problemsOf(declared.where, error));
      return undefined;
    }
  };

  // Types in dependency order: what an entry references is written before it.
  for (const name of ENTITY_NAMES) {
    const definition = definitionOf(name);
    const foreign = foreignFields(definition);
    for (const declared of config.entities[name]) {
      const references = resolveReferences(declared, foreign, ids, problems);
      if (!references) continue;
      const { key } = definition.declarative;
      const existing = draft.list(name).find((stored) => matchesKey(key, foreign, stored, declared.input, references));
      // decK refuses a file that declares one entity twice ("entity already exists"): not merged into one.
      if (existing && kept.has(`${name}:${existing.id}`)) {
        problems.push(`${declared.where}: ${declaredTwice(definition, foreign, declared)}`);
        continue;
      }
      const entity = upsert(name, declared, references, existing);
      if (!entity) continue;
      const fields: Record<string, unknown> = entity;
      for (const alternative of key) {
        const value = alternative.length === 1 ? fields[alternative[0]!] : undefined;
        if (typeof value === 'string') ids[name].set(value, entity.id);
      }
      ids[name].set(entity.id, entity.id);
      ids[name].set(declared.where, entity.id);
    }
  }

  if (problems.length > 0) throw new DeclarativeConfigError(config.file, problems);

  // Delete what is in scope but no longer in the file, children first (Kong cascades).
  for (const name of [...ENTITY_NAMES].reverse()) {
    for (const entity of draft.list(name)) {
      if (!inScope(entity.tags, selectTags) || kept.has(`${name}:${entity.id}`) || !draft.get(name, entity.id)) continue;
      try {
        service.remove(draft, name, entity.id);
        summary.deleted += 1;
      } catch (error) {
        problems.push(...problemsOf(`${name} ${entity.id}`, error));
      }
    }
  }
  if (problems.length > 0) throw new DeclarativeConfigError(config.file, problems);
  return summary;
}
