import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenApiResponses, type OpenApiDocument } from './openapi-responses.ts';
import { parsedYaml } from './parsed-yaml.ts';
import { sharedFile } from './shared-files.ts';

/** Kong's official Admin API OpenAPI document (OSS 3.9), beside the repository in ../shared. */
export const KONG_ADMIN_OPENAPI = sharedFile('kong/admin-api-oss-3.9.openapi.yaml');

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const responses = KONG_ADMIN_OPENAPI === undefined
  ? undefined
  : new OpenApiResponses(parsedYaml(KONG_ADMIN_OPENAPI, 'kong-admin-openapi.json') as OpenApiDocument, ajv, 'kong-admin');

/** Kong serialises unset fields as null where its spec says `type: string`: treat null as absent. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
  }
  return value;
}

/**
 * Problems of a real Admin API response against Kong's spec ([] when it conforms). Kong answers
 * 201 to creations where its spec documents 200: the 200 schema is used then. Without the spec (no
 * ../shared) it is []: sharedFile has registered the skipped test that says so.
 */
export function kongAdminProblems(method: string, pathTemplate: string, status: number, body: unknown): string[] {
  if (!responses) return [];
  const declared = responses.responsesOf(method, pathTemplate);
  if (!declared) return [`${method} ${pathTemplate} is not in Kong's Admin API spec`];
  const key = String(status) in declared ? String(status) : status === 201 && '200' in declared ? '200' : undefined;
  if (!key) return [`status ${status} is not documented for ${method} ${pathTemplate}`];
  const validate = responses.jsonBodyValidator(method, pathTemplate, key);
  if (!validate || validate(withoutNulls(body))) return [];
  return [`${responses.errorsText(validate)} in ${JSON.stringify(body).slice(0, 300)}`];
}
