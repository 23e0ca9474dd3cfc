import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ENTITY_NAMES, definitionOf, foreignFields, type EntityName } from '../schema/entities/index.ts';
import { isPlainObject } from '../schema/validate.ts';
import { loneSurrogatePath } from '../schema/lone-surrogates.ts';
import { childrenOf, keyValueOf, topLevelOf } from './declarative-form.ts';

/** An entity of kong.yml as the file gives it; references to other entities are by name or id. */
export interface Declared {
  /** Where it is in the file, for messages: `services[0] (animal-store)`. */
  where: string;
  /** The entity's fields as written (nested lists and references taken out), select tags added. */
  input: Record<string, unknown>;
  /** Its references by foreign field: a name, username or id of the entity referenced. */
  refs: Record<string, string>;
  /** The foreign field its place in the file filled: it is nested under the entity referenced. */
  nestedIn?: string;
}

export interface DeclarativeConfig {
  file: string;
  selectTags: string[];
  /** Every type's entities, in the order of the file. */
  entities: Record<EntityName, Declared[]>;
}

/** kong.yml could not be used: every problem found, each naming its entity and field. */
export class DeclarativeConfigError extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`${file}: ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);
  }
}

const TOP_LEVEL_TYPES = ENTITY_NAMES.filter((name) => topLevelOf(name));
const TOP_LEVEL = new Set(['_format_version', '_transform', '_info', '_workspace', ...TOP_LEVEL_TYPES]);

/**
 * decK's templating: `${{ env "DECK_NAME" }}` is replaced by the environment variable, which
 * must exist and, as in decK, start with DECK_.
 */
export function substituteEnv(text: string, env: NodeJS.ProcessEnv, problems: string[]): string {
  return text.replace(/\$\{\{\s*env\s+"([^"]+)"\s*\}\}/g, (whole, name: string) => {
    if (!name.startsWith('DECK_')) {
      problems.push(`environment variable ${name}: decK only substitutes variables prefixed with DECK_`);
      return whole;
    }
    const value = env[name];
    if (value === undefined) {
      problems.push(`environment variable "${name}" present in state file but not set`);
      return whole;
    }
    return value;
  });
}

/** `services[0] (name)`: the entry's first key field set (a credential's key is secret: not shown), else its id. */
function label(type: EntityName, index: number, fields: Record<string, unknown>): string {
  const { key, secretKey } = definitionOf(type).declarative;
  const foreign = new Set(foreignFields(definitionOf(type)).map(({ field }) => field));
  const named = key.flat().find((field) => !foreign.has(field) && fields[field] !== undefined && fields[field] !== null);
  const name = secretKey ? undefined : named !== undefined ? fields[named] : fields.id;
  // A PEM (a CA certificate's key) is no name to show.
  const shown = typeof name === 'string' && name.includes('\n') ? undefined : name;
  return `${type}[${index}]${shown !== undefined && shown !== null ? ` (${String(shown)})` : ''}`;
}

const asList = (value: unknown, where: string, problems: string[]): unknown[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${where}: expected a list`);
    return [];
  }
  return value;
};

/**
 * Reads a decK/Kong declarative file (format 3.0) into its entities, each with where it is and
 * what it references by name. Throws DeclarativeConfigError naming every problem of the file's
 * form; the entities' own rules are the entity service's, which the sync applies.
 */
export function readDeclarativeConfig(file: string, env: NodeJS.ProcessEnv = process.env): DeclarativeConfig {
  const problems: string[] = [];
  let parsed: unknown;
  try {
    parsed = parse(substituteEnv(readFileSync(file, 'utf8'), env, problems)) ?? {};
  } catch (error) {
    throw new DeclarativeConfigError(file, [`cannot read or parse: ${error instanceof Error ? error.message : String(error)}`]);
  }
  if (!isPlainObject(parsed)) throw new DeclarativeConfigError(file, ['the file must be a YAML mapping']);
  const document = parsed;
  // YAML's "\ud800" escape: Kong's cjson would refuse the snapshot (decK would send U+FFFD)
  const lone = loneSurrogatePath(document);
  if (lone !== undefined) throw new DeclarativeConfigError(file, [`${lone}: a lone surrogate (\\ud800-\\udfff without its pair) is not a Unicode character`]);

  if (document._format_version !== '3.0') problems.push(`_format_version: expected "3.0", got ${JSON.stringify(document._format_version)}`);
  for (const key of Object.keys(document)) {
    if (!TOP_LEVEL.has(key)) problems.push(`${key}: unknown top-level key (the local gateway runs ${TOP_LEVEL_TYPES.join(', ')})`);
  }
  if (document._workspace !== undefined) problems.push('_workspace: workspaces are a Kong Enterprise feature');
  if (document._transform === false) problems.push('_transform: false (pre-hashed credentials) is not supported');
  const info = isPlainObject(document._info) ? document._info : {};
  for (const key of Object.keys(info)) {
    if (key !== 'select_tags') problems.push(`_info.${key}: not supported by the local gateway`);
  }
  const tagList = info.select_tags ?? [];
  const selectTags = Array.isArray(tagList) && tagList.every((t): t is string => typeof t === 'string') ? tagList : [];
  if (selectTags !== tagList) problems.push('_info.select_tags: expected a list of strings');

  const entities = Object.fromEntries(ENTITY_NAMES.map((name) => [name, []])) as unknown as DeclarativeConfig['entities'];
  const config: DeclarativeConfig = { file, selectTags, entities };

  const declare = (type: EntityName, raw: unknown, where: string, parent?: { field: string; ref: string }): Declared | undefined => {
    if (!isPlainObject(raw)) {
      problems.push(`${where}: expected a mapping`);
      return undefined;
    }
    const { declarative } = definitionOf(type);
    const input = { ...raw };
    for (const child of childrenOf(type)) delete input[child.type];
    // decK sends no empty list (go-kong's fields are `omitempty`), so Kong stores none: a route's
    // `hosts: []` is no hosts, not a hosts list that outranks longer paths (transform.lua:609)
    for (const [field, value] of Object.entries(input)) if (Array.isArray(value) && value.length === 0) delete input[field];
    const refs: Declared['refs'] = parent ? { [parent.field]: parent.ref } : {};
    for (const { field, reference } of foreignFields(definitionOf(type))) {
      const value = input[field];
      if (value === undefined || value === null) continue;
      const target = typeof value === 'string' ? value : isPlainObject(value) ? (value.id ?? keyValueOf(reference, value)) : undefined;
      if (typeof target !== 'string') problems.push(`${where}: ${field}: expected a name, username or id`);
      else refs[field] = target;
      delete input[field];
    }
    // decK matches entities by these keys: without them a sync could not find them again.
    const key = declarative.key[0]?.[0];
    if (declarative.keyRequired && key !== undefined && typeof input[key] !== 'string') {
      problems.push(`${where}: ${key}: required in a declarative file (decK matches ${type} by ${key})`);
    }
    const requires = topLevelOf(type)?.requires;
    if (!parent && requires !== undefined && refs[requires] === undefined) problems.push(`${where}: ${requires}: required for a top-level entry of ${type}`);
    // Every entity of the file carries the select tags (decK's --select-tag).
    const own = Array.isArray(input.tags) ? (input.tags as unknown[]) : input.tags === undefined || input.tags === null ? [] : undefined;
    if (own) {
      const tags = [...new Set([...own, ...selectTags])];
      input.tags = tags.length > 0 ? tags : null;
    }
    return { where, input, refs, ...(parent ? { nestedIn: parent.field } : {}) };
  };

  // A list of entries of `type` (top-level, or nested under the entry at `parentWhere`), and what is nested in each.
  const visit = (type: EntityName, list: unknown, parentWhere: string, parent?: { field: string; ref: string }): void => {
    const prefix = parentWhere ? `${parentWhere}.` : '';
    asList(list, `${prefix}${type}`, problems).forEach((raw, i) => {
      const fields = isPlainObject(raw) ? raw : {};
      const where = `${prefix}${label(type, i, fields)}`;
      const declared = declare(type, raw, where, parent);
      if (!declared) return;
      config.entities[type].push(declared);
      // An entry without a name (a certificate without an id) is referenced by its place in the file.
      const ref = String(keyValueOf(type, declared.input) ?? where);
      for (const child of childrenOf(type)) visit(child.type, fields[child.type], where, { field: child.field, ref });
    });
  };
  for (const type of TOP_LEVEL_TYPES) visit(type, document[type], '');

  if (problems.length > 0) throw new DeclarativeConfigError(file, problems);
  return config;
}
