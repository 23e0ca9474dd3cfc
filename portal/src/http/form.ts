import type { Context } from 'koa';

/**
 * One text field of an urlencoded form: a missing or repeated field is '', and a value longer
 * than `max` code units is cut there (the page says the limit; validation reports it).
 */
export function formField(ctx: Context, name: string, max = 1024): string {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.slice(0, max + 1) : '';
}
