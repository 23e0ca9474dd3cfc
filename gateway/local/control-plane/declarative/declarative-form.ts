import { ENTITY_NAMES, definitionOf, foreignFields, type EntityName } from '../schema/entities/index.ts';

/** The types nested in an entry of `parent` in kong.yml, each with the foreign field its place fills. */
export function childrenOf(parent: EntityName): Array<{ type: EntityName; field: string }> {
  return ENTITY_NAMES.flatMap((type) => {
    const nestedIn: readonly string[] = definitionOf(type).declarative.nestedIn ?? [];
    return foreignFields(definitionOf(type))
      .filter(({ field, reference }) => reference === parent && nestedIn.includes(field))
      .map(({ field }) => ({ type, field }));
  });
}

/** Whether entries of a type may be a top-level list of kong.yml, and what such an entry must name. */
export function topLevelOf(type: EntityName): { requires?: string } | undefined {
  const { topLevel } = definitionOf(type).declarative;
  return topLevel === true ? {} : topLevel || undefined;
}

/**
 * The value other entries name an entity by: its first one-field key that is set (a service's
 * name; a consumer's username, else its custom_id).
 */
export function keyValueOf(type: EntityName, fields: Record<string, unknown>): unknown {
  for (const alternative of definitionOf(type).declarative.key) {
    const value = alternative.length === 1 ? fields[alternative[0]!] : undefined;
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}
