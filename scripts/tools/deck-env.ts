import { existsSync, readFileSync } from 'node:fs';
import { readBackendConfig } from '../../backend/src/index.ts';
import { LOCAL_DECK_ENV } from '../../gateway/local/index.ts';
import { readPortalListen } from '../../portal/src/index.ts';

/** http://host:port for a listen address; a wildcard one is reached on loopback. */
function connectUrl(host: string, port: number): string {
  const connectHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${connectHost.includes(':') ? `[${connectHost}]` : connectHost}:${port}`;
}

/**
 * The DECK_* variables gateway/kong.yml takes, as `npm start` gives them to the local gateway:
 * the backend at BACKEND_HOST:BACKEND_PORT (127.0.0.1:3000), the portal at PORTAL_HOST:PORTAL_PORT
 * (127.0.0.1:3001), rate limits counted `local`.
 */
export function npmStartDeckEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const backend = readBackendConfig(env);
  const portal = readPortalListen(env);
  return {
    ...LOCAL_DECK_ENV,
    DECK_ANIMAL_STORE_BACKEND_URL: connectUrl(backend.host, backend.port),
    DECK_ANIMAL_STORE_PORTAL_URL: connectUrl(portal.host, portal.port),
  };
}

export class DeckEnvError extends Error {}

/** decK's commands that change a Kong: `gateway sync|apply|reset`, and the old top-level `sync`. */
function writes(args: readonly string[]): boolean {
  return args.some((arg, i) => ['sync', 'apply', 'reset'].includes(arg) && (i === 0 || args[i - 1] === 'gateway'));
}

/** The `${{ env "DECK_…" }}` names the state files among `args` use. */
function referencedVariables(args: readonly string[]): string[] {
  const names = new Set<string>();
  for (const arg of args) {
    if (!/\.(ya?ml|json)$/.test(arg) || !existsSync(arg)) continue;
    for (const [, name] of readFileSync(arg, 'utf8').matchAll(/\$\{\{\s*env\s+"(DECK_[A-Z0-9_]+)"\s*\}\}/g)) names.add(name!);
  }
  return [...names];
}

/**
 * The environment `npm run deck -- <args>` runs decK with. decK refuses a file naming an unset
 * variable, one variable per try; here a command that only reads (diff, validate, dump, file …)
 * gets npm start's value for each of kong.yml's variables that is unset, and `filled` names those
 * its files use.
 * A command that writes refuses at once, naming every unset variable its files use: production's
 * values are for the operator to give, never a local default.
 */
export function deckEnv(args: readonly string[], env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; filled: string[] } {
  const defaults = npmStartDeckEnv(env);
  if (writes(args)) {
    const missing = referencedVariables(args).filter((name) => !env[name]);
    if (missing.length > 0) {
      const example = missing.filter((name) => name in defaults).map((name) => `${name}=${defaults[name]}`);
      throw new DeckEnvError(
        `${missing.join(', ')} unset: a write takes kong.yml's values from you, never npm start's` +
          (example.length > 0 ? ` (npm start's: ${example.join(' ')})` : ''),
      );
    }
    return { env, filled: [] };
  }
  const used = new Set(referencedVariables(args));
  const filled: string[] = [];
  const result = { ...env };
  for (const [name, value] of Object.entries(defaults)) {
    if (env[name]) continue;
    result[name] = value;
    if (used.has(name)) filled.push(`${name}=${value}`);
  }
  return { env: result, filled };
}
