import { createHash } from 'node:crypto';
import type { Snapshot } from '../db/entity-store.ts';
import type { SnapshotOf } from '../schema/entity.ts';
import { definitionOf, foreignFields, type AnyEntity, type ENTITIES, type ForeignKey } from '../schema/entities/index.ts';
import { SNAPSHOT_TYPES, SNAPSHOT_VERSION } from './snapshot-schema.ts';

/** The store's state, committed or about to be (a draft compiles to what it would commit). */
type StoreView = Pick<Snapshot, 'list' | 'version'>;

// The document every data-plane node runs: gateway/local/snapshot.schema.json, generated from the
// same definitions (their `snapshot` projections) that drive this compiler.

type SnapshotTypes = (typeof SNAPSHOT_TYPES)[number];
export type SnapshotEntities = { [N in SnapshotTypes]: Array<SnapshotOf<(typeof ENTITIES)[N]>> };

export interface DataPlaneSnapshot extends SnapshotEntities {
  snapshot_version: typeof SNAPSHOT_VERSION;
  config_version: number;
  config_hash: string;
}

/** A compiled snapshot with its serialisation, done once and sent to every node as is. */
export interface CompiledSnapshot {
  version: number;
  hash: string;
  json: string;
}

type Projector = (entity: AnyEntity) => Record<string, unknown>;

/** A type's projection as one function: its fields in order, references as `{ id }`, fallbacks for nulls, conversions. */
function projectorOf(name: SnapshotTypes): Projector {
  const definition = definitionOf(name);
  const { fields, fallback = {}, convert = {} } = definition.snapshot!;
  const references = new Set(foreignFields(definition).map(({ field }) => field));
  const steps = fields.map((field) => ({
    field,
    fallback: fallback[field] ?? null,
    reference: references.has(field),
    convert: convert[field] as ((stored: unknown) => unknown) | undefined,
  }));
  return (entity) => {
    const stored = entity as unknown as Record<string, unknown>;
    const sent: Record<string, unknown> = {};
    for (const step of steps) {
      const value = stored[step.field] ?? null;
      sent[step.field] =
        value === null ? step.fallback : step.reference ? { id: (value as ForeignKey).id } : step.convert ? step.convert(value) : value;
    }
    return sent;
  };
}

const PROJECTORS = SNAPSHOT_TYPES.map((name) => [name, projectorOf(name)] as const);
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function entitiesOf(view: StoreView): SnapshotEntities {
  const entities: Record<string, unknown[]> = {};
  for (const [name, project] of PROJECTORS) entities[name] = view.list(name).sort(byId).map(project);
  return entities as SnapshotEntities;
}

/**
 * The store's state as the snapshot data planes run. The hash covers the entities only, so the
 * same configuration always hashes the same, whatever its version. It is MD5 in hex, as Kong's
 * configuration hashes are (kong/clustering/config_helper.lua:140,170): what /status and
 * /clustering/data-planes report has their format, though not their input.
 */
export function compileSnapshot(view: StoreView): CompiledSnapshot {
  const entities = JSON.stringify(entitiesOf(view));
  const hash = createHash('md5').update(entities).digest('hex');
  // The entity payload is serialised once: the document is its fields spliced after the header.
  const header = JSON.stringify({ snapshot_version: SNAPSHOT_VERSION, config_version: view.version, config_hash: hash });
  return { version: view.version, hash, json: `${header.slice(0, -1)},${entities.slice(1)}` };
}
