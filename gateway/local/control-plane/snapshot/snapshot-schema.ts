import { fileURLToPath } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import type { RunDefinition } from '../schema/entity.ts';
import { ENTITY_NAMES, definitionOf, type ENTITIES, type EntityName } from '../schema/entities/index.ts';
import { KONG, type FieldSchema } from '../schema/typedefs.ts';

// snapshot.schema.json, generated from the entity definitions: each type's projection (which
// fields the data plane receives) over its fields' schemas. `npm run generate:snapshot-schema`
// writes it; a test fails when the committed file differs.

export const SNAPSHOT_VERSION = 2;

/** gateway/local/snapshot.schema.json: the contract between the planes, which the data plane reads. */
export const SNAPSHOT_SCHEMA_FILE = fileURLToPath(new URL('../../snapshot.schema.json', import.meta.url));

/** The types the data plane receives, in the order of the document (and of its hash). */
/** The names of the types whose definition has a snapshot projection. */
type ProjectedName = {
  [N in EntityName]: (typeof ENTITIES)[N] extends RunDefinition<infer _P, infer F> ? ([F] extends [never] ? never : N) : never;
}[EntityName];
export const SNAPSHOT_TYPES = ENTITY_NAMES.filter((name): name is ProjectedName => definitionOf(name).snapshot !== undefined);

type Json = Record<string, unknown>;

/** An entity type's name in the schema's $defs and in the data plane's messages: `route` for routes. */
const singular = (name: string): string => name.replace(/s$/, '');

/** JSON Schema keywords of a field's schema the data plane checks; Kong's own attributes stay behind. */
const KEPT = ['type', 'enum', 'const', 'pattern', 'minLength', 'minimum', 'maximum', 'exclusiveMinimum', 'minItems', 'required'] as const;

/** A field's schema as the data plane checks it: typedefs' JSON Schema without Kong's attributes. */
function dataSchema(schema: TSchema): Json {
  if (Array.isArray(schema.anyOf)) return { anyOf: (schema.anyOf as TSchema[]).map(dataSchema) };
  const kong = (schema as FieldSchema)[KONG];
  if (kong?.uuid) return { $ref: '#/$defs/uuid' };
  if (kong?.type === 'foreign') return { $ref: '#/$defs/reference', 'x-foreign': kong.reference };
  if (kong?.abstract) return { type: 'object' };
  if (kong?.type === 'map' && kong.values) return { type: 'object', additionalProperties: dataSchema(kong.values) };
  const out: Json = {};
  for (const keyword of KEPT) if (schema[keyword] !== undefined) out[keyword] = schema[keyword];
  if (schema.items) out.items = dataSchema(schema.items as TSchema);
  if (kong?.type === 'set') out.uniqueItems = true;
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, TSchema>).map(([k, v]) => [k, dataSchema(v)]));
    out.additionalProperties = false;
  }
  return out;
}

/** Without the null of a nullable field: a fallback fills it. */
function nonNull(schema: Json): Json {
  const variants = schema.anyOf as Json[] | undefined;
  const value = variants?.filter((variant) => variant.type !== 'null');
  return value?.length === 1 ? value[0]! : schema;
}

function entitySchema(definition: RunDefinition): Json {
  const projection = definition.snapshot!;
  const properties: Json = {};
  for (const field of projection.fields) {
    const declared = projection.narrow?.[field] ?? definition.schema.properties[field];
    if (!declared) throw new Error(`${definition.name}: the snapshot sends ${field}, which is not a field`);
    const schema = dataSchema(declared);
    properties[field] = projection.fallback?.[field] !== undefined ? nonNull(schema) : schema;
  }
  return {
    ...(projection.description ? { description: projection.description } : {}),
    type: 'object',
    additionalProperties: false,
    required: [...projection.fields],
    properties,
  };
}

/** The snapshot's JSON Schema (draft 2020-12), as snapshot.schema.json holds it. */
function snapshotSchema(): Json {
  const types = SNAPSHOT_TYPES;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://animal-store.example/local-gateway/snapshot-${SNAPSHOT_VERSION}.schema.json`,
    title: 'Local gateway configuration snapshot',
    description:
      'What the control plane (TypeScript) compiles and every data-plane node (Lua on nginx) runs: one complete, versioned configuration, ' +
      "as Kong's hybrid mode sends a declarative export from the control plane to its data planes. Entities keep Kong 3.9's field names " +
      'and foreign-key shape ({"id": …}); only the fields the data plane reads are carried. The control plane validated everything ' +
      'already: the data plane refuses a snapshot whose snapshot_version it does not know or that does not match this schema, and keeps ' +
      'running the previous one. A field marked x-foreign references an entity of that list, which the snapshot must hold; ' +
      "uniqueItems marks Kong's sets. Generated from the entity definitions (gateway/local/control-plane/schema/entities): " +
      'npm run generate:snapshot-schema.',
    type: 'object',
    additionalProperties: false,
    required: ['snapshot_version', 'config_version', 'config_hash', ...types],
    properties: {
      snapshot_version: { description: 'The format of this document. A data plane refuses a version it does not know.', const: SNAPSHOT_VERSION },
      config_version: {
        description:
          'Increases with every configuration the control plane\'s store commits (persisted with the store, so a restart continues the sequence).',
        type: 'integer',
        minimum: 0,
      },
      config_hash: {
        description:
          `MD5 (hex, as Kong's configuration hashes) of the entity payload: ${types.join(', ')}, as serialised in this document. ` +
          'Data planes report the hash they run; equal hashes mean equal configurations. (Version 1 had SHA-256 here.)',
        type: 'string',
        pattern: '^[0-9a-f]{32}$',
      },
      ...Object.fromEntries(types.map((name) => [name, { type: 'array', items: { $ref: `#/$defs/${singular(name)}` } }])),
    },
    $defs: {
      uuid: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' },
      reference: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { $ref: '#/$defs/uuid' } } },
      ...Object.fromEntries(types.map((name: EntityName) => [singular(name), entitySchema(definitionOf(name))])),
    },
  };
}

/** snapshot.schema.json's text. */
export const snapshotSchemaText = (): string => `${JSON.stringify(snapshotSchema(), null, 2)}\n`;
