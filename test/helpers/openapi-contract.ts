import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OpenApiResponses, type OpenApiDocument } from './openapi-responses.ts';
import { parsedYaml } from './parsed-yaml.ts';

const document = parsedYaml(new URL('../../gateway/openapi.yaml', import.meta.url), 'animal-store-openapi.json') as OpenApiDocument;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addFormat('int64', true);
const responses = new OpenApiResponses(document, ajv, 'animal-store-openapi');

/**
 * Validates a real response against gateway/openapi.yaml: the status must be documented for the
 * operation (or fall to `default`), the body must match its schema, and every header the document
 * marks on that response must be present. Returns the list of problems (empty when it conforms).
 */
export function contractProblems(
  method: string,
  pathTemplate: string,
  response: { status: number; headers: Headers; body: unknown },
  options: { checkHeaders?: boolean } = {},
): string[] {
  const declared = responses.responsesOf(method, pathTemplate);
  if (!declared) return [`${method} ${pathTemplate} is not in the OpenAPI document`];
  const statusKey = String(response.status) in declared ? String(response.status) : 'default';
  const responseObject = declared[statusKey] && responses.resolved(declared[statusKey]);
  if (!responseObject) return [`status ${response.status} is not documented for ${method} ${pathTemplate}`];
  const problems: string[] = [];
  const validate = responses.jsonBodyValidator(method, pathTemplate, statusKey);
  if (validate && !validate(response.body)) {
    problems.push(`body: ${responses.errorsText(validate)} in ${JSON.stringify(response.body)}`);
  }
  if (options.checkHeaders) {
    for (const name of Object.keys(responseObject.headers ?? {})) {
      const optional = name === 'Link' || name === 'Location' || name === 'WWW-Authenticate' || name === 'Idempotent-Replayed' ||
        (name === 'Retry-After' && response.status === 409); // only with idempotency_key_in_progress
      if (!optional && !response.headers.has(name)) problems.push(`header ${name} is missing`);
    }
  }
  return problems;
}

/** Every error code the document lists. */
export const documentedErrorCodes = new Set(
  ((document.components.schemas as Record<string, unknown>).ErrorCode as { enum: string[] }).enum,
);

/** Validates a value against one of gateway/openapi.yaml's component schemas (`NewPet`): its problems, none when it conforms. */
export function schemaProblems(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`animal-store-openapi#/components/schemas/${name}`);
  if (!validate) return [`no schema ${name} in the OpenAPI document`];
  return validate(value) ? [] : [ajv.errorsText(validate.errors)];
}
