/** Stable, machine-readable error codes. Every one is listed in gateway/openapi.yaml. */
export const ErrorCode = {
  validationFailed: 'validation_failed',
  invalidJson: 'invalid_json',
  invalidCursor: 'invalid_cursor',
  unsupportedMediaType: 'unsupported_media_type',
  payloadTooLarge: 'payload_too_large',
  notFound: 'not_found',
  petNotFound: 'pet_not_found',
  orderNotFound: 'order_not_found',
  methodNotAllowed: 'method_not_allowed',
  petNotAvailable: 'pet_not_available',
  invalidOrderTransition: 'invalid_order_transition',
  invalidIdempotencyKey: 'invalid_idempotency_key',
  idempotencyKeyInProgress: 'idempotency_key_in_progress',
  idempotencyKeyReused: 'idempotency_key_reused',
  badRequest: 'bad_request',
  requestTimeout: 'request_timeout',
  requestHeadersTooLarge: 'request_headers_too_large',
  internalError: 'internal_error',
  serviceUnavailable: 'service_unavailable',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorBody {
  code: string;
  message: string;
  status: number;
}

/** An error the API answers with on purpose: it becomes the `{code, message, status}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}
