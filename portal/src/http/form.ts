import type { Context } from 'koa';

/**
 * One text field of an urlencoded form: a missing or repeated field is '', and a value longer
 * than `max` code units is cut there (the page says the limit; validation reports it).
 */
export function formField(ctx: Context, name: string, max = 1024): string {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.slice(0, max + 1) : '';
}

/** Every value of a repeated field (checkboxes of one name): none is [], at most `maxCount` are kept. */
export function formFields(ctx: Context, name: string, maxCount = 16, max = 64): string[] {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  const values = Array.isArray(value) ? value : [value];
  return values.filter((item): item is string => typeof item === 'string').slice(0, maxCount).map((item) => item.slice(0, max + 1));
}
