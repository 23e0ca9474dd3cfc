import { headerName } from '../control-plane/schema/field-schema.ts';
import { KONG_VERSION } from '../control-plane/kong-version.ts';
import type { PluginDefinition } from './plugin.ts';

// Behaviour of kong/plugins/request-termination/{handler,schema}.lua (3.9.1).
const DEFAULT_RESPONSE: Record<number, string> = {
  401: 'Unauthorized',
  404: 'Not found',
  405: 'Method not allowed',
  500: 'An unexpected error occurred',
  502: 'Bad Gateway',
  503: 'Service unavailable',
};

const present = (value: unknown) => typeof value === 'string' && value.length > 0;

export const requestTermination: PluginDefinition = {
  name: 'request-termination',
  priority: 2,
  version: KONG_VERSION,
  configFields: [
    { status_code: { type: 'integer', required: true, default: 503, between: [100, 599] } },
    { message: { type: 'string' } },
    { content_type: { type: 'string' } },
    { body: { type: 'string' } },
    { echo: { type: 'boolean', required: true, default: false } },
    { trigger: headerName },
  ],
  check(config) {
    if (present(config.message) && (present(config.content_type) || present(config.body))) {
      return 'message cannot be used with content_type or body';
    }
    if (present(config.content_type) && !present(config.body)) return 'content_type requires a body';
    if (config.echo && (present(config.content_type) || present(config.body))) {
      return 'echo cannot be used with content_type and body';
    }
    return undefined;
  },
  unsupported(config) {
    return config.echo ? 'config.echo: echoing the request is not implemented' : undefined;
  },
  access(ctx, config) {
    const status = config.status_code as number;
    const trigger = config.trigger as string | null;
    if (trigger && ctx.getHeader(trigger) === undefined && ctx.getQuery()[trigger] === undefined) return;
    if (present(config.body)) {
      ctx.exit(status, config.body as string, config.content_type ? { 'Content-Type': config.content_type as string } : undefined);
    }
    const message = (config.message as string | null) ?? DEFAULT_RESPONSE[status];
    ctx.exit(status, message ? { message } : undefined);
  },
};
