import type { Context } from 'koa';

export function readBodyOnce(ctx: Context, limit: string): Promise<Buffer>;
