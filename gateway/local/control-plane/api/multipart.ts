import type { Middleware } from 'koa';
import type { KoaBodyMiddlewareOptions } from 'koa-body';
import qs from 'qs';
import { isPlainObject } from '../schema/validate.ts';

/** Kong's limit on a body's arguments (kong/api/arguments.lua, max_post_args). */
const MAX_ARGUMENTS = 1000;

/**
 * multipart/form-data as Kong reads it (kong/api/arguments.lua load, 3.9.3): every part is an
 * argument, a file part's content its value (a certificate's PEM may come as a file). Parts are
 * kept in memory, never written to disk: the body is already within the Admin API's limit.
 */
export const MULTIPART_AS_FIELDS: NonNullable<KoaBodyMiddlewareOptions['formidable']> = {
  maxFields: MAX_ARGUMENTS,
  onPart(part, handlePart) {
    // formidable reads a part without a media type as a field
    part.mimetype = null;
    handlePart(part);
  },
};

/**
 * A multipart body's argument names nest as a form's do (`config.minute`, `tags[]`,
 * `service[id]`: kong/api/arguments_decoder.lua), by the same parser koa-body gives forms.
 */
export const nestedMultipartNames: Middleware = async (ctx, next) => {
  const body: unknown = ctx.request.body;
  if (ctx.request.is('multipart') && isPlainObject(body)) {
    // (repeated names are lists: qs nests them as it nests a form's)
    const nested = qs.parse(body as Record<string, string>, { allowDots: true, parameterLimit: MAX_ARGUMENTS });
    ctx.request.body = nested as typeof ctx.request.body;
  }
  await next();
};
