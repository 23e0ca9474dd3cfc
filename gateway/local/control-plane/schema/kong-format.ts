import type { TProperties, TSchema } from '@sinclair/typebox';
import { kongField } from './typedefs.ts';

/**
 * A field as Kong's `/schemas/…` endpoints print it (kong/api/api_helpers.lua schema_to_jsonable):
 * Kong's own attribute names, records expanded, internal fields left out.
 */
export function kongSchemaField(schema: TSchema): Record<string, unknown> {
  const { attributes: a } = kongField(schema);
  const out: Record<string, unknown> = { type: a.type };
  if (a.reference) out.reference = a.reference;
  // Records in entities are required unless they say otherwise (kong/db/schema/entity.lua
  // make_records_required), which is why decK expands absent ones such as config.redis.
  if (a.required || (a.type === 'record' && a.required === undefined)) out.required = true;
  if (a.uuid) out.uuid = true;
  if (a.auto) out.auto = true;
  if (a.unique) out.unique = true;
  if (a.default !== undefined) out.default = a.default;
  if (a.one_of) out.one_of = [...a.one_of];
  if (a.between) out.between = [...a.between];
  if (a.gt !== undefined) out.gt = a.gt;
  if (a.len_min !== undefined) out.len_min = a.len_min;
  if (a.mutually_exclusive_subsets) out.mutually_exclusive_subsets = a.mutually_exclusive_subsets.map((subset) => [...subset]);
  if (a.starts_with !== undefined) out.starts_with = a.starts_with;
  if (a.abstract) out.abstract = true;
  if (a.transient) out.transient = true;
  if (a.on_delete && a.on_delete !== 'restrict') out.on_delete = a.on_delete;
  if (a.elements) out.elements = kongSchemaField(a.elements);
  if (a.keys) out.keys = kongSchemaField(a.keys);
  if (a.values) out.values = kongSchemaField(a.values);
  if (a.type === 'record' && !a.abstract) out.fields = kongSchemaFields(a.fields ?? {});
  return out;
}

/** Kong's `fields`: an array of one-field records, in declaration order. */
export function kongSchemaFields(fields: TProperties): Array<Record<string, unknown>> {
  return Object.entries(fields)
    .filter(([, schema]) => !kongField(schema).attributes.internal)
    .map(([name, schema]) => ({ [name]: kongSchemaField(schema) }));
}
