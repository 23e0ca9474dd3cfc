import { createHash } from 'node:crypto';
import type { RouterContext } from '@koa/router';
import type { Context } from 'koa';
import { ApiError, ErrorCode } from '../http/errors.ts';

const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** Kong's key-auth sends the authenticated consumer's id upstream (and clears a client's own). */
const CONSUMER_ID_HEADER = 'X-Consumer-ID';
/** The scope of requests that reach the backend without X-Consumer-ID (not through the gateway). */
const NO_CONSUMER_SCOPE = '';

const MAX_LENGTH = 255;
// Printable ASCII, space included: what an HTTP field value can carry without encoding questions.
const PRINTABLE = /^[\x20-\x7e]+$/;

/** Where a key's record lives and what identifies the request it was first used for. */
export interface KeyedRequest {
  scope: string;
  key: string;
  fingerprint: string;
}

/**
 * The operation a request names: the path of the route that matched it, its parameters in. The
 * router takes /pets/ and /pets as one operation, and so does the key; /store/orders/1/approve and
 * /store/orders/2/approve stay two. A path spelt as its route comes out unchanged, so records
 * stored when the fingerprint hashed the path as sent still match theirs.
 */
function operationPath(ctx: Context): string {
  const { routerPath, params } = ctx as Partial<Pick<RouterContext, 'routerPath' | 'params'>>;
  if (routerPath === undefined) return ctx.path;
  return routerPath.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params?.[name] ?? ''));
}

/**
 * The request's Idempotency-Key, its scope and its fingerprint, or undefined without the header.
 * The key is taken as sent (the IETF draft's quoted form included): one header line of 1 to 255
 * printable ASCII characters, else 400. The fingerprint covers method, operation (operationPath)
 * and the body's exact bytes.
 */
export function readKeyedRequest(ctx: Context, body: Uint8Array): KeyedRequest | undefined {
  const lines = ctx.req.headersDistinct['idempotency-key'];
  if (lines === undefined) return undefined;
  // One field line: the key is one string (an sf-string in the IETF draft), not a list, so two
  // lines are two keys, which Node would join into one ("a, b") that neither of them is.
  const key = lines.length === 1 ? lines[0]! : '';
  if (key.length === 0 || key.length > MAX_LENGTH || !PRINTABLE.test(key)) {
    throw new ApiError(
      400,
      ErrorCode.invalidIdempotencyKey,
      `${IDEMPOTENCY_KEY_HEADER} must be sent once, as 1 to ${MAX_LENGTH} printable ASCII characters.`,
    );
  }
  const consumer = ctx.get(CONSUMER_ID_HEADER);
  if (consumer.length > MAX_LENGTH || (consumer !== '' && !PRINTABLE.test(consumer))) {
    throw new ApiError(400, ErrorCode.validationFailed, `${CONSUMER_ID_HEADER} must be at most ${MAX_LENGTH} printable ASCII characters.`);
  }
  const fingerprint = createHash('sha256').update(`${ctx.method}\n${operationPath(ctx)}\n`).update(body).digest('hex');
  return { scope: consumer || NO_CONSUMER_SCOPE, key, fingerprint };
}
