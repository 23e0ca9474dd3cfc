import { kongSchemaField } from '../kong-format.ts';
import { isPlainObject, validateField, type FieldErrors } from '../validate.ts';
import type { DeprecatedShorthand } from './plugin-schema.ts';

/** The config record's `shorthand_fields` as `/schemas/plugins/{name}` prints them (api_helpers schema_to_jsonable, `func` left out). */
export function kongShorthandFields(shorthands: readonly DeprecatedShorthand[]): Array<Record<string, unknown>> {
  return shorthands.map((shorthand) => ({
    [shorthand.name]: {
      ...kongSchemaField(shorthand.field),
      deprecation: {
        replaced_with: [{ path: [...shorthand.replacedWith] }],
        message: shorthand.message,
        removal_in_version: shorthand.removalInVersion,
      },
    },
  }));
}

function valueAt(record: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = record;
  for (const key of path) value = isPlainObject(value) ? value[key] : undefined;
  return value;
}

/**
 * A stored config as Kong's process_auto_fields answers it in a select (kong/db/schema/init.lua:1845-1855,
 * 3.9.3): each deprecated shorthand set to the value at its replaced_with path. Kong hides them only
 * from the read before an update's merge (hide_shorthands, kong/db/dao/init.lua:514-523).
 */
export function withShorthands(shorthands: readonly DeprecatedShorthand[], config: Record<string, unknown>): Record<string, unknown> {
  if (shorthands.length === 0) return config;
  const output = { ...config };
  for (const { name, replacedWith } of shorthands) output[name] = valueAt(config, replacedWith) ?? null;
  return output;
}

/**
 * A config with its deprecated shorthands moved to the fields replacing them, as Kong's
 * process_auto_fields does (kong/db/schema/init.lua:1798-1844, 3.9.3): each value is checked
 * against the shorthand's type; a value already at the new path wins, and a different one there is
 * an error (validate_deprecation_exclusiveness, init.lua:1745-1770). Errors are keyed `config.<shorthand>`.
 */
export function expandShorthands(shorthands: readonly DeprecatedShorthand[], config: unknown, errors: FieldErrors): unknown {
  if (shorthands.length === 0 || !isPlainObject(config)) return config;
  const expanded: Record<string, unknown> = structuredClone(config);
  for (const { name, field, replacedWith } of shorthands) {
    const value = expanded[name];
    if (value === undefined) continue;
    delete expanded[name];
    const path = `config.${name}`;
    const local: FieldErrors = {};
    validateField(field, value, path, local);
    if (Object.keys(local).length > 0) {
      Object.assign(errors, local);
      continue;
    }
    const current = valueAt(expanded, replacedWith);
    if (value !== null && current !== undefined && current !== null && current !== value) {
      errors[path] =
        'both deprecated and new field are used but their values mismatch: ' +
        `${name} = ${String(value)} vs ${replacedWith.join('.')} = ${String(current)}`;
      continue;
    }
    if (current !== undefined && current !== null) continue;
    let parent = expanded;
    for (const key of replacedWith.slice(0, -1)) {
      if (!isPlainObject(parent[key])) parent[key] = {};
      parent = parent[key] as Record<string, unknown>;
    }
    parent[replacedWith.at(-1)!] = value;
  }
  return expanded;
}
