import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

const DOCUMENT_ID = 'animal-store-openapi';

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: Record<string, Record<string, unknown>>;
}

const document = parse(readFileSync(new URL('../../gateway/openapi.yaml', import.meta.url), 'utf8')) as OpenApiDocument;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addFormat('int64', true);
ajv.addSchema(document as object, DOCUMENT_ID);

const pointer = (...segments: string[]) =>
  segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

function resolve(node: unknown): { ref: string; value: Record<string, unknown> } {
  const ref = (node as { $ref?: string }).$ref;
  if (!ref) return { ref: '', value: node as Record<string, unknown> };
  const [, group, name] = /^#\/components\/([^/]+)\/(.+)$/.exec(ref)!;
  return { ref, value: document.components[group!]![name!] as Record<string, unknown> };
}

const cache = new Map<string, ValidateFunction>();

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
  const operation = document.paths[pathTemplate]?.[method.toLowerCase()];
  if (!operation) return [`${method} ${pathTemplate} is not in the OpenAPI document`];
  const statusKey = String(response.status) in operation.responses ? String(response.status) : 'default';
  const declared = operation.responses[statusKey];
  if (!declared) return [`status ${response.status} is not documented for ${method} ${pathTemplate}`];
  const { value: responseObject } = resolve(declared);
  const problems: string[] = [];
  const content = responseObject.content as Record<string, { schema: unknown }> | undefined;
  if (content?.['application/json']) {
    const key = `${method} ${pathTemplate} ${statusKey}`;
    let validate = cache.get(key);
    if (!validate) {
      const schemaPath = (declared as { $ref?: string }).$ref
        ? `#/${pointer('components', 'responses', (declared as { $ref: string }).$ref.split('/').pop()!, 'content', 'application/json', 'schema')}`
        : `#/${pointer('paths', pathTemplate, method.toLowerCase(), 'responses', statusKey, 'content', 'application/json', 'schema')}`;
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}${schemaPath}` });
      cache.set(key, validate);
    }
    if (!validate(response.body)) {
      problems.push(`body: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(response.body)}`);
    }
  }
  if (options.checkHeaders) {
    for (const name of Object.keys((responseObject.headers as object | undefined) ?? {})) {
      const optional = name === 'Link' || name === 'Location' || name === 'WWW-Authenticate';
      if (!optional && !response.headers.has(name)) problems.push(`header ${name} is missing`);
    }
  }
  return problems;
}

/** Every error code the document lists. */
export const documentedErrorCodes = new Set(
  (document.components.schemas!.ErrorCode as { enum: string[] }).enum,
);
