import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';

/**
 * gateway/openapi.yaml as the portal's API reference serves it: read once at start, its `servers`
 * replaced by the one API base URL this portal's users call (PORTAL_API_URL, the gateway's /v1),
 * so that "try it" goes through the gateway. The path is the same from portal/src/ and from the
 * bundle in dist/portal/server/ (whose build copies the file to dist/gateway/), as plans.yaml's.
 */
const SPEC_FILE = new URL('../../gateway/openapi.yaml', import.meta.url);

export interface ReferenceSpec {
  json: string;
  yaml: string;
  /** The security scheme of the API key (`type: http, scheme: bearer`): what "Authorize" fills in. */
  bearerScheme: string;
}

type SecuritySchemes = Record<string, { type?: string; scheme?: string }>;

export function referenceSpec(apiUrl: string): ReferenceSpec {
  const document = parse(readFileSync(SPEC_FILE, 'utf8')) as Record<string, unknown>;
  const spec = { ...document, servers: [{ url: apiUrl, description: 'The Animal Store API, through the gateway' }] };
  const schemes: SecuritySchemes = (document.components as { securitySchemes?: SecuritySchemes } | undefined)?.securitySchemes ?? {};
  const bearerScheme = Object.keys(schemes).find((name) => schemes[name]!.type === 'http' && schemes[name]!.scheme?.toLowerCase() === 'bearer');
  if (!bearerScheme) throw new Error('gateway/openapi.yaml has no http bearer security scheme for the API key');
  return { json: JSON.stringify(spec), yaml: stringify(spec), bearerScheme };
}
