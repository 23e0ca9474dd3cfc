import type { Context, Middleware } from 'koa';
import getRawBody from 'raw-body';
import { ApiError, ErrorCode } from './errors.ts';
import { findRoundedNumber, type RoundedNumber } from './json-numbers.ts';
import { isEchoable } from './validation.ts';

const JSON_BODY_LIMIT_BYTES = 64 * 1024;
/** No operation takes more than one level; 32 leaves room for growth and bounds every walk over a body. */
const JSON_MAX_DEPTH = 32;

const invalidJson = (reason: string) => new ApiError(400, ErrorCode.invalidJson, `Request body is not a valid JSON object: ${reason}.`);

// In a `u` regular expression a surrogate pair is one code point, so \p{Cs} matches only lone halves.
const LONE_SURROGATE = /\p{Cs}/u;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return headers['transfer-encoding'] !== undefined;
}

async function readBytes(ctx: Context): Promise<Buffer> {
  try {
    return await getRawBody(ctx.req, { length: ctx.get('Content-Length') || undefined, limit: JSON_BODY_LIMIT_BYTES });
  } catch (error) {
    if ((error as { type?: unknown }).type === 'entity.too.large') {
      throw new ApiError(413, ErrorCode.payloadTooLarge, `Request body exceeds ${JSON_BODY_LIMIT_BYTES} bytes.`);
    }
    // A body shorter than its Content-Length, or an aborted upload: the request itself is malformed.
    throw invalidJson('the body ended before its announced length');
  }
}

/**
 * Walks a parsed body without recursion: depth is capped, and every string (keys included) must be
 * well-formed UTF-16. A lone surrogate (`"\ud800"`) is refused rather than stored as U+FFFD.
 */
function checkStructure(value: unknown): void {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) throw invalidJson('a string contains a lone surrogate (\\ud800-\\udfff escape without its pair)');
    } else if (current !== null && typeof current === 'object') {
      if (depth >= JSON_MAX_DEPTH) throw invalidJson(`it nests deeper than ${JSON_MAX_DEPTH} levels`);
      for (const [key, item] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) throw invalidJson('a key contains a lone surrogate (\\ud800-\\udfff escape without its pair)');
        stack.push({ value: item, depth: depth + 1 });
      }
    }
  }
}

function roundedNumberError({ field, literal }: RoundedNumber): ApiError {
  const echo = isEchoable(literal) ? literal : `a number of ${literal.length} characters`;
  const where = field.length > 0 && isEchoable(field) ? `${field}: ` : '';
  return new ApiError(400, ErrorCode.validationFailed, `Invalid request body: ${where}expected an integer, but received ${echo}, which is not one (it would be rounded to ${Number(literal)}).`);
}

/** Parses UTF-8 JSON text into an object (the validators judge its fields), or throws 400. */
function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidJson('it is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidJson('it is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object') throw invalidJson('it is a JSON scalar');
  if (Array.isArray(parsed)) throw invalidJson('it is a JSON array');
  checkStructure(parsed);
  const rounded = findRoundedNumber(text);
  if (rounded) throw roundedNumberError(rounded);
  return parsed;
}

/** The body requireJsonBody parsed: an object, for the validators to judge. */
export function jsonBody(ctx: Context): unknown {
  return ctx.state.jsonBody;
}

/** The raw bytes of the JSON body, for the Idempotency-Key fingerprint. */
export function rawBody(ctx: Context): Uint8Array {
  return (ctx.state.rawBody as Uint8Array | undefined) ?? new Uint8Array();
}

/**
 * Requires an `application/json` body: 415 for any other media type, charset or content coding,
 * 400 when it is missing, malformed, not a JSON object, not UTF-8, too deep or holds a lone
 * surrogate, 413 past the limit. The parsed value is `jsonBody(ctx)`.
 */
export const requireJsonBody: Middleware = async (ctx, next) => {
  if (!hasBody(ctx.headers)) {
    throw new ApiError(400, ErrorCode.validationFailed, 'A JSON request body is required.');
  }
  if (!ctx.is('application/json')) {
    throw new ApiError(415, ErrorCode.unsupportedMediaType, 'Request body must be application/json.');
  }
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError(415, ErrorCode.unsupportedMediaType, 'Request body charset must be utf-8.');
  }
  const coding = ctx.get('Content-Encoding').toLowerCase();
  if (coding !== '' && coding !== 'identity') {
    throw new ApiError(415, ErrorCode.unsupportedMediaType, 'Request body must not be compressed (Content-Encoding).');
  }
  const bytes = await readBytes(ctx);
  ctx.state.rawBody = bytes;
  ctx.state.jsonBody = parseJsonBody(bytes);
  await next();
};
