import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { renderedOnce } from '../../packages/node-runtime/rendered-once.js';

/**
 * gateway/openapi.yaml as the portal's API reference serves it: read once at start, its `servers`
 * replaced by the one API base URL this portal's users call (PORTAL_API_URL, the gateway's /v1),
 * so that "try it" goes through the gateway. The path is the same from portal/src/ and from the
 * bundle in dist/portal/server/ (whose build copies the file to dist/gateway/), as plans.yaml's.
 */
const SPEC_FILE = new URL('../../gateway/openapi.yaml', import.meta.url);
/** The repository's node_modules/, where a development clone keeps the rendered reference (see renderedOnce). */
const NODE_MODULES = new URL('../../node_modules/', import.meta.url);

export interface ReferenceSpec {
  json: string;
  yaml: string;
  /** The security scheme of the API key (`type: http, scheme: bearer`): what "Authorize" fills in. */
  bearerScheme: string;
}

type SecuritySchemes = Record<string, { type?: string; scheme?: string }>;

export function referenceSpec(apiUrl: string): ReferenceSpec {
  const source = readFileSync(SPEC_FILE, 'utf8');
  // the parse is most of the cost and the same at every start; API URLs differ (a test stack's port)
  const document = renderedOnce(NODE_MODULES, { inputs: ['portal reference', source], packages: ['yaml'] }, () => parse(source) as Record<string, unknown>);
  const spec = { ...document, servers: [{ url: apiUrl, description: 'The Animal Store API, through the gateway' }] };
  const schemes: SecuritySchemes = (document.components as { securitySchemes?: SecuritySchemes } | undefined)?.securitySchemes ?? {};
  const bearerScheme = Object.keys(schemes).find((name) => schemes[name]!.type === 'http' && schemes[name]!.scheme?.toLowerCase() === 'bearer');
  if (!bearerScheme) throw new Error('gateway/openapi.yaml has no http bearer security scheme for the API key');
  return { json: JSON.stringify(spec), yaml: stringify(spec), bearerScheme };
}
