import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { isPlainObject } from '../schema/validate.ts';

/** An entity of kong.yml as the file gives it; references to other entities are by name or id. */
export interface Declared {
  /** Where it is in the file, for messages: `services[0] (animal-store)`. */
  where: string;
  /** The entity's fields as written (nested lists and references taken out), select tags added. */
  input: Record<string, unknown>;
  refs: { service?: string; route?: string; consumer?: string };
}

export interface DeclarativeConfig {
  file: string;
  selectTags: string[];
  services: Declared[];
  routes: Declared[];
  consumers: Declared[];
  keyauthCredentials: Declared[];
  acls: Declared[];
  plugins: Declared[];
}

/** kong.yml could not be used: every problem found, each naming its entity and field. */
export class DeclarativeConfigError extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`${file}: ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);
  }
}

const TOP_LEVEL = new Set(['_format_version', '_transform', '_info', '_workspace', 'services', 'routes', 'consumers', 'plugins']);
const NESTED: Record<string, readonly string[]> = {
  services: ['routes', 'plugins'],
  routes: ['plugins'],
  consumers: ['keyauth_credentials', 'acls', 'plugins'],
};

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

function label(type: string, index: number, fields: Record<string, unknown>): string {
  const name = fields.name ?? fields.username ?? fields.custom_id ?? (type === 'keyauth_credentials' ? undefined : fields.id);
  return `${type}[${index}]${name ? ` (${String(name)})` : ''}`;
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

  if (document._format_version !== '3.0') problems.push(`_format_version: expected "3.0", got ${JSON.stringify(document._format_version)}`);
  for (const key of Object.keys(document)) {
    if (!TOP_LEVEL.has(key)) problems.push(`${key}: unknown top-level key (the local gateway runs services, routes, consumers and plugins)`);
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

  const config: DeclarativeConfig = {
    file, selectTags, services: [], routes: [], consumers: [], keyauthCredentials: [], acls: [], plugins: [],
  };

  const declare = (type: string, raw: unknown, where: string, refs: Declared['refs']): Declared | undefined => {
    if (!isPlainObject(raw)) {
      problems.push(`${where}: expected a mapping`);
      return undefined;
    }
    const input = { ...raw };
    for (const nested of NESTED[type] ?? []) delete input[nested];
    for (const ref of ['service', 'route', 'consumer'] as const) {
      const value = input[ref];
      if (value === undefined || value === null) continue;
      const target = typeof value === 'string' ? value : isPlainObject(value) ? (value.id ?? value.name ?? value.username) : undefined;
      if (typeof target !== 'string') problems.push(`${where}: ${ref}: expected a name, username or id`);
      else refs[ref] = target;
      delete input[ref];
    }
    // decK matches entities by these keys: without them a sync could not find them again.
    if ((type === 'services' || type === 'routes') && typeof input.name !== 'string') {
      problems.push(`${where}: name: required in the local gateway (decK matches entities by name)`);
    }
    if (type === 'keyauth_credentials' && typeof input.key !== 'string') {
      problems.push(`${where}: key: required in a declarative file (decK matches credentials by key)`);
    }
    // Every entity of the file carries the select tags (decK's --select-tag).
    const own = Array.isArray(input.tags) ? (input.tags as unknown[]) : input.tags === undefined || input.tags === null ? [] : undefined;
    if (own) {
      const tags = [...new Set([...own, ...selectTags])];
      input.tags = tags.length > 0 ? tags : null;
    }
    return { where, input, refs };
  };

  const pushPlugins = (list: unknown, parent: string, refs: Declared['refs']) => {
    asList(list, `${parent}.plugins`, problems).forEach((raw, i) => {
      const name = isPlainObject(raw) ? String(raw.name) : 'undefined';
      const declared = declare('plugins', raw, `${parent}.plugins[${i}] (${name})`.replace(/^\./, ''), { ...refs });
      if (declared) config.plugins.push(declared);
    });
  };
  const entries = (list: unknown, type: string, parent = '') =>
    asList(list, parent ? `${parent}.${type}` : type, problems).map((raw, i) => ({
      raw,
      nested: isPlainObject(raw) ? raw : {},
      where: `${parent ? `${parent}.` : ''}${label(type, i, isPlainObject(raw) ? raw : {})}`,
    }));

  for (const { raw, nested, where } of entries(document.services, 'services')) {
    const service = declare('services', raw, where, {});
    if (!service) continue;
    config.services.push(service);
    const serviceName = String(service.input.name);
    pushPlugins(nested.plugins, where, { service: serviceName });
    for (const route of entries(nested.routes, 'routes', where)) {
      const declared = declare('routes', route.raw, route.where, { service: serviceName });
      if (!declared) continue;
      config.routes.push(declared);
      pushPlugins(route.nested.plugins, route.where, { route: String(declared.input.name) });
    }
  }
  for (const { raw, nested, where } of entries(document.routes, 'routes')) {
    const route = declare('routes', raw, where, {});
    if (!route) continue;
    if (!route.refs.service) problems.push(`${where}: service: required for a top-level route`);
    config.routes.push(route);
    pushPlugins(nested.plugins, where, { route: String(route.input.name) });
  }
  for (const { raw, nested, where } of entries(document.consumers, 'consumers')) {
    const consumer = declare('consumers', raw, where, {});
    if (!consumer) continue;
    config.consumers.push(consumer);
    const ref = String(consumer.input.username ?? consumer.input.custom_id);
    asList(nested.keyauth_credentials, `${where}.keyauth_credentials`, problems).forEach((credential, j) => {
      const declared = declare('keyauth_credentials', credential, `${where}.keyauth_credentials[${j}]`, { consumer: ref });
      if (declared) config.keyauthCredentials.push(declared);
    });
    asList(nested.acls, `${where}.acls`, problems).forEach((acl, j) => {
      const declared = declare('acls', acl, `${where}.acls[${j}]`, { consumer: ref });
      if (declared) config.acls.push(declared);
    });
    pushPlugins(nested.plugins, where, { consumer: ref });
  }
  pushPlugins(document.plugins, '', {});

  if (problems.length > 0) throw new DeclarativeConfigError(file, problems);
  return config;
}
