import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

/** Kong's official Admin API OpenAPI document (OSS 3.9), beside the repository in ../shared. */
export const KONG_ADMIN_OPENAPI = fileURLToPath(new URL('../../../shared/kong/admin-api-oss-3.9.openapi.yaml', import.meta.url));

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }> }>>;
  components: { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
}

const document = parse(readFileSync(KONG_ADMIN_OPENAPI, 'utf8')) as Document;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(document as object, 'kong-admin');
const cache = new Map<string, ValidateFunction>();

const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

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
 * 201 to creations where its spec documents 200: the 200 schema is used then.
 */
export function kongAdminProblems(method: string, pathTemplate: string, status: number, body: unknown): string[] {
  const operation = document.paths[pathTemplate]?.[method.toLowerCase()];
  if (!operation) return [`${method} ${pathTemplate} is not in Kong's Admin API spec`];
  const key = String(status) in operation.responses ? String(status) : status === 201 && '200' in operation.responses ? '200' : undefined;
  if (!key) return [`status ${status} is not documented for ${method} ${pathTemplate}`];
  const declared = operation.responses[key]!;
  const pointer = declared.$ref
    ? `#/components/responses/${escape(declared.$ref.split('/').pop()!)}/content/application~1json/schema`
    : `#/paths/${escape(pathTemplate)}/${method.toLowerCase()}/responses/${key}/content/application~1json/schema`;
  const resolved = declared.$ref ? document.components.responses[declared.$ref.split('/').pop()!] : declared;
  if (!resolved?.content?.['application/json']) return [];
  let validate = cache.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `kong-admin${pointer}` });
    cache.set(pointer, validate);
  }
  return validate(withoutNulls(body)) ? [] : [`${ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 300)}`];
}
