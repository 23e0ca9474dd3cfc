import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError, ErrorCode } from './errors.ts';

export const JSON_BODY_LIMIT_BYTES = 64 * 1024;

const parseJson = koaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: JSON_BODY_LIMIT_BYTES,
  urlencoded: false,
  text: false,
  multipart: false,
  parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
  onError(error) {
    const status = (error as { status?: unknown }).status;
    if (status === 413) {
      throw new ApiError(413, ErrorCode.payloadTooLarge, `Request body exceeds ${JSON_BODY_LIMIT_BYTES} bytes.`);
    }
    if (status === 415) {
      throw new ApiError(415, ErrorCode.unsupportedMediaType, 'Request body charset is not supported.');
    }
    throw new ApiError(400, ErrorCode.invalidJson, 'Request body is not a valid JSON object.');
  },
});

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return headers['transfer-encoding'] !== undefined;
}

/**
 * Requires an `application/json` body: 415 for any other media type, 400 when it is missing,
 * then parses it (400 on malformed JSON, 413 past the limit).
 */
export const requireJsonBody: Middleware = async (ctx, next) => {
  if (!hasBody(ctx.headers)) {
    throw new ApiError(400, ErrorCode.validationFailed, 'A JSON request body is required.');
  }
  if (!ctx.is('application/json')) {
    throw new ApiError(415, ErrorCode.unsupportedMediaType, 'Request body must be application/json.');
  }
  await parseJson(ctx, next);
};
