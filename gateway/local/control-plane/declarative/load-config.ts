import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { FieldErrors } from '../schema/field-schema.ts';
import { validateEntity } from '../schema/entity-schemas.ts';
import type { PluginRegistry } from '../schema/plugins/registry.ts';

/** An entity of kong.yml after validation; references to other entities are by name or id. */
export interface Declared<T = Record<string, unknown>> {
  /** Where it is in the file, for messages: `services[0] (animal-store)`. */
  where: string;
  fields: T;
  refs: { service?: string; route?: string; consumer?: string };
}

export interface DeclarativeConfig {
  file: string;
  selectTags: string[];
  services: Declared[];
  routes: Declared[];
  consumers: Declared[];
  keyauthCredentials: Declared[];
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
  consumers: ['keyauth_credentials', 'plugins'],
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

const asList = (value: unknown, where: string, problems: string[]): Record<string, unknown>[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${where}: expected a list`);
    return [];
  }
  return value as Record<string, unknown>[];
};

function reportErrors(where: string, errors: FieldErrors, problems: string[]): void {
  for (const [field, message] of Object.entries(errors)) {
    problems.push(field === '@entity' || field.endsWith('.@entity') ? `${where}: ${message}` : `${where}: ${field}: ${message}`);
  }
}

/** Reads and validates a decK/Kong declarative file (format 3.0). Throws DeclarativeConfigError. */
export function loadDeclarativeConfig(file: string, registry: PluginRegistry, env: NodeJS.ProcessEnv = process.env): DeclarativeConfig {
  const problems: string[] = [];
  let document: Record<string, unknown>;
  try {
    const text = substituteEnv(readFileSync(file, 'utf8'), env, problems);
    document = (parse(text) ?? {}) as Record<string, unknown>;
  } catch (error) {
    throw new DeclarativeConfigError(file, [`cannot read or parse: ${(error as Error).message}`]);
  }
  if (typeof document !== 'object' || Array.isArray(document)) throw new DeclarativeConfigError(file, ['the file must be a YAML mapping']);

  if (document._format_version !== '3.0') problems.push(`_format_version: expected "3.0", got ${JSON.stringify(document._format_version)}`);
  for (const key of Object.keys(document)) {
    if (!TOP_LEVEL.has(key)) problems.push(`${key}: unknown top-level key (the local gateway runs services, routes, consumers and plugins)`);
  }
  if (document._workspace !== undefined) problems.push('_workspace: workspaces are a Kong Enterprise feature');
  if (document._transform === false) problems.push('_transform: false (pre-hashed credentials) is not supported');
  const info = (document._info ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(info)) {
    if (key !== 'select_tags') problems.push(`_info.${key}: not supported by the local gateway`);
  }
  const selectTags = (info.select_tags ?? []) as string[];
  if (!Array.isArray(selectTags) || selectTags.some((t) => typeof t !== 'string')) problems.push('_info.select_tags: expected a list of strings');

  const config: DeclarativeConfig = { file, selectTags, services: [], routes: [], consumers: [], keyauthCredentials: [], plugins: [] };

  const withTags = (fields: Record<string, unknown>) => {
    const tags = new Set([...((fields.tags as string[] | null) ?? []), ...selectTags]);
    return { ...fields, tags: tags.size > 0 ? [...tags] : null };
  };

  const declare = (
    type: 'services' | 'routes' | 'consumers' | 'keyauth_credentials' | 'plugins',
    raw: Record<string, unknown>,
    where: string,
    refs: Declared['refs'],
  ): Declared | undefined => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push(`${where}: expected a mapping`);
      return undefined;
    }
    const input = { ...raw };
    for (const nested of NESTED[type] ?? []) delete input[nested];
    if (type === 'services' && typeof input.url === 'string') Object.assign(input, parseServiceUrl(input.url, where, problems));
    delete input.url;
    for (const ref of ['service', 'route', 'consumer'] as const) {
      if (input[ref] !== undefined && input[ref] !== null) {
        const value = input[ref];
        const target = typeof value === 'string' ? value : ((value as Record<string, unknown>).id ?? (value as Record<string, unknown>).name ?? (value as Record<string, unknown>).username);
        if (typeof target !== 'string') problems.push(`${where}: ${ref}: expected a name, username or id`);
        else refs[ref] = target;
      }
      delete input[ref];
    }
    const errors: FieldErrors = {};
    let fields: Record<string, unknown>;
    if (type === 'plugins') {
      const { config: pluginConfig, ...rest } = input;
      fields = validateEntity('plugins', rest, errors);
      if (typeof fields.name === 'string') {
        const scope = { consumer: !!refs.consumer, route: !!refs.route, service: !!refs.service };
        fields.config = registry.validateConfig(fields.name, pluginConfig, scope, errors);
      }
    } else {
      fields = validateEntity(type, input, errors);
    }
    if (type === 'consumers' && !fields.username && !fields.custom_id) {
      errors['@entity'] = "at least one of these fields must be non-empty: 'custom_id', 'username'";
    }
    if (type === 'keyauth_credentials' && typeof fields.key !== 'string') {
      errors.key = 'required in a declarative file (decK matches credentials by key)';
    }
    if ((type === 'services' || type === 'routes') && typeof fields.name !== 'string') {
      errors.name = 'required in the local gateway (decK matches entities by name)';
    }
    reportErrors(where, errors, problems);
    return { where, fields: withTags(fields), refs };
  };

  const pushPlugins = (list: unknown, parent: string, refs: Declared['refs']) => {
    asList(list, `${parent}.plugins`, problems).forEach((raw, i) => {
      const declared = declare('plugins', raw, `${parent}.plugins[${i}] (${String(raw?.name)})`, { ...refs });
      if (declared) config.plugins.push(declared);
    });
  };

  asList(document.services, 'services', problems).forEach((raw, i) => {
    const where = label('services', i, raw ?? {});
    const service = declare('services', raw, where, {});
    if (!service) return;
    config.services.push(service);
    const serviceName = service.fields.name as string;
    pushPlugins(raw.plugins, where, { service: serviceName });
    asList(raw.routes, `${where}.routes`, problems).forEach((routeRaw, j) => {
      const routeWhere = `${where}.${label('routes', j, routeRaw ?? {})}`;
      const route = declare('routes', routeRaw, routeWhere, { service: serviceName });
      if (!route) return;
      config.routes.push(route);
      pushPlugins(routeRaw.plugins, routeWhere, { route: route.fields.name as string });
    });
  });
  asList(document.routes, 'routes', problems).forEach((raw, i) => {
    const where = label('routes', i, raw ?? {});
    const route = declare('routes', raw, where, {});
    if (!route) return;
    if (!route.refs.service) problems.push(`${where}: service: required for a top-level route`);
    config.routes.push(route);
    pushPlugins(raw.plugins, where, { route: route.fields.name as string });
  });
  asList(document.consumers, 'consumers', problems).forEach((raw, i) => {
    const where = label('consumers', i, raw ?? {});
    const consumer = declare('consumers', raw, where, {});
    if (!consumer) return;
    config.consumers.push(consumer);
    const ref = (consumer.fields.username ?? consumer.fields.custom_id) as string;
    asList(raw.keyauth_credentials, `${where}.keyauth_credentials`, problems).forEach((credRaw, j) => {
      const credential = declare('keyauth_credentials', credRaw, `${where}.keyauth_credentials[${j}]`, { consumer: ref });
      if (credential) config.keyauthCredentials.push(credential);
    });
    pushPlugins(raw.plugins, where, { consumer: ref });
  });
  pushPlugins(document.plugins, '', {});
  config.plugins.forEach((p) => (p.where = p.where.replace(/^\./, '')));

  if (problems.length > 0) throw new DeclarativeConfigError(file, problems);
  return config;
}

export function parseServiceUrl(url: string, where: string, problems: string[]): Record<string, unknown> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    problems.push(`${where}: url: invalid URL ${JSON.stringify(url)}`);
    return {};
  }
  const protocol = parsed.protocol.replace(/:$/, '');
  const defaultPort = protocol === 'https' ? 443 : 80;
  return {
    protocol,
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : defaultPort,
    ...(parsed.pathname && parsed.pathname !== '/' ? { path: parsed.pathname } : url.replace(/\/+$/, '') !== url ? { path: '/' } : {}),
  };
}
