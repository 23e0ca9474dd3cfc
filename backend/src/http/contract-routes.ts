import { readFileSync } from 'node:fs';
import type Router from '@koa/router';
import { parseDocument } from 'yaml';
import { renderedOnce } from '../../../packages/node-runtime/rendered-once.js';

/**
 * gateway/openapi.yaml, at the same depth from backend/src/http/ and from the image's
 * dist/backend/http/ (backend/Dockerfile copies it to /app/gateway/).
 */
export const CONTRACT_FILE = new URL('../../../gateway/openapi.yaml', import.meta.url);
/** The repository's node_modules/, where a development clone keeps the rendered contract (see renderedOnce). */
const NODE_MODULES = new URL('../../../node_modules/', import.meta.url);

export interface ContractServers {
  production: string;
  staging: string;
}

const DEFAULT_SERVERS: ContractServers = {
  production: 'https://api.example.com/v1',
  staging: 'https://staging-api.example.com/v1',
};

/** API_PRODUCTION_URL and API_STAGING_URL: the public base URLs the served contract names. */
export function readContractServers(env: NodeJS.ProcessEnv = process.env): ContractServers {
  const servers = {
    production: env.API_PRODUCTION_URL || DEFAULT_SERVERS.production,
    staging: env.API_STAGING_URL || DEFAULT_SERVERS.staging,
  };
  for (const [name, url] of Object.entries({ API_PRODUCTION_URL: servers.production, API_STAGING_URL: servers.staging })) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw new Error(`${name} must be an http(s) URL, got ${JSON.stringify(url)}`);
    }
  }
  return servers;
}

/** The contract as served: the file, with its servers list replaced by the configured base URLs. */
function renderContract(source: string, servers: ContractServers): { json: string; yaml: string } {
  const document = parseDocument(source);
  document.set('servers', [
    { url: servers.production, description: 'Production' },
    { url: servers.staging, description: 'Staging' },
  ]);
  return { json: JSON.stringify(document.toJS()), yaml: document.toString() };
}

/**
 * GET /openapi.json and /openapi.yaml: the public contract, rendered once at start (in a
 * development clone, read from the last start's rendering of the same file and servers). The
 * gateway serves them as /v1/openapi.*, behind the same key and limits as every other operation.
 */
export function contractRoutes(router: Router, env: NodeJS.ProcessEnv = process.env): void {
  const source = readFileSync(CONTRACT_FILE, 'utf8');
  const servers = readContractServers(env);
  const key = { inputs: ['backend contract', renderContract.toString(), source, servers], packages: ['yaml'] };
  const contract = renderedOnce(NODE_MODULES, key, () => renderContract(source, servers));
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = contract.json;
  });
  router.get('/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml; charset=utf-8'; // RFC 9512
    ctx.body = contract.yaml;
  });
}
