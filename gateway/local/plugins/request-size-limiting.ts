import { KONG_VERSION } from '../control-plane/kong-version.ts';
import type { RequestContext } from '../proxy/request-context.ts';
import type { PluginDefinition } from './plugin.ts';

// Behaviour of kong/plugins/request-size-limiting/{handler,schema}.lua (3.9.3).
const SIZE_UNITS = ['megabytes', 'kilobytes', 'bytes'] as const;
const FACTOR: Record<(typeof SIZE_UNITS)[number], number> = { bytes: 1, kilobytes: 1024, megabytes: 1048576 };
const MESSAGE = 'Request size limit exceeded';

function tooLarge(ctx: RequestContext): never {
  // A client waiting for `100 Continue` is told 417 instead (handler.lua check_size).
  const expect = ctx.getHeader('expect');
  ctx.error(expect?.trim().toLowerCase() === '100-continue' ? 417 : 413, MESSAGE);
}

export const requestSizeLimiting: PluginDefinition = {
  name: 'request-size-limiting',
  priority: 951,
  version: KONG_VERSION,
  configFields: [
    { allowed_payload_size: { type: 'integer', default: 128 } },
    { size_unit: { type: 'string', required: true, default: 'megabytes', one_of: [...SIZE_UNITS] } },
    { require_content_length: { type: 'boolean', required: true, default: false } },
  ],
  /**
   * A declared Content-Length is checked before anything is read. Otherwise Kong reads the whole
   * body (kong.request.get_raw_body) and checks its size; here the read stops as soon as the body
   * passes the limit, so memory stays bounded by it.
   */
  access(ctx, config) {
    const allowed = (config.allowed_payload_size as number) * FACTOR[config.size_unit as keyof typeof FACTOR];
    const declared = ctx.getHeader('content-length');
    if (declared !== undefined && declared.trim() !== '' && !Number.isNaN(Number(declared))) {
      if (Number(declared) > allowed) tooLarge(ctx);
      return;
    }
    if (config.require_content_length && ctx.getHeader('transfer-encoding') !== 'chunked') {
      ctx.error(411, 'A valid Content-Length header is required');
    }
    // No body at all (get_raw_body gives ""): nothing to read, and no turn of the event loop.
    if (ctx.body.declaredLength === undefined && !ctx.body.chunked) return;
    return checkBodySize(ctx, allowed);
  },
};

async function checkBodySize(ctx: RequestContext, allowed: number): Promise<void> {
  const { exceeded } = await ctx.body.read(allowed);
  if (exceeded) tooLarge(ctx);
}
