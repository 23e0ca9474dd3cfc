import type { Ajv, ValidateFunction } from 'ajv';

interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema: unknown }>;
  headers?: Record<string, unknown>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { responses?: Record<string, ResponseObject> } & Record<string, unknown>;
}

const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * The responses an OpenAPI document declares, and compiled validators for their JSON bodies
 * (responses by $ref to components.responses resolved). Shared by the contract checks of our own
 * document and of Kong's Admin API.
 */
export class OpenApiResponses {
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly document: OpenApiDocument,
    private readonly ajv: Ajv,
    private readonly documentId: string,
  ) {
    ajv.addSchema(document, documentId);
  }

  /** The declared responses of an operation, or undefined when the document lacks it. */
  responsesOf(method: string, pathTemplate: string): Record<string, ResponseObject> | undefined {
    return this.document.paths[pathTemplate]?.[method.toLowerCase()]?.responses;
  }

  /** A declared response with any $ref followed. */
  resolved(declared: ResponseObject): ResponseObject | undefined {
    return declared.$ref ? this.document.components.responses?.[declared.$ref.split('/').pop()!] : declared;
  }

  /** The validator of a response's application/json body, or undefined when it declares none. */
  jsonBodyValidator(method: string, pathTemplate: string, statusKey: string): ValidateFunction | undefined {
    const declared = this.responsesOf(method, pathTemplate)?.[statusKey];
    if (!declared || !this.resolved(declared)?.content?.['application/json']) return undefined;
    const pointer = declared.$ref
      ? `#/components/responses/${escape(declared.$ref.split('/').pop()!)}/content/application~1json/schema`
      : `#/paths/${escape(pathTemplate)}/${method.toLowerCase()}/responses/${statusKey}/content/application~1json/schema`;
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${this.documentId}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  errorsText(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors);
  }
}
