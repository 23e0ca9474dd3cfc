import type { Middleware } from 'koa';
import type { KoaBodyMiddlewareOptions } from 'koa-body';
import qs from 'qs';
import { isPlainObject } from '../schema/validate.ts';

/**
 * multipart/form-data as Kong reads it: kong/api/arguments.lua:543-551 (3.9.3) takes the parts
 * lapis parsed (kong-lapis 1.16.0.1 lapis/nginx.lua parse_multipart), every part an argument, a
 * file part's content its value (a certificate's PEM may come as a file). Lapis reads every part,
 * with no count limit (max_post_args bounds only a form): the body's size bounds them. Parts are
 * kept in memory, never written to disk: the body is already within the Admin API's limit.
 */
export const MULTIPART_AS_FIELDS: NonNullable<KoaBodyMiddlewareOptions['formidable']> = {
  maxFields: Infinity,
  onPart(part, handlePart) {
    // formidable reads a part without a media type as a field
    part.mimetype = null;
    handlePart(part);
  },
};

/**
 * A multipart body's argument names nest as a form's do (`config.minute`, `tags[]`,
 * `service[id]`: kong/api/arguments_decoder.lua), by the same parser koa-body gives forms.
 * A name sent twice keeps its last part, as lapis's parse_multipart stores `out[name]`
 * (a form's repeated name is a list: that is nginx's get_post_args).
 */
export const nestedMultipartNames: Middleware = async (ctx, next) => {
  const body: unknown = ctx.request.body;
  if (ctx.request.is('multipart') && isPlainObject(body)) {
    const lastOfEach = Object.fromEntries(Object.entries(body).map(([name, value]) => [name, Array.isArray(value) ? value.at(-1) : value]));
    ctx.request.body = qs.parse(lastOfEach as Record<string, string>, { allowDots: true }) as typeof ctx.request.body;
  }
  await next();
};
