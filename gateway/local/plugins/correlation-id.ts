import { randomUUID } from 'node:crypto';
import { KONG_VERSION } from '../control-plane/kong-version.ts';
import type { RequestContext } from '../proxy/request-context.ts';
import type { PluginConfig, PluginDefinition } from './plugin.ts';

// Behaviour of kong/plugins/correlation-id/{handler,schema}.lua (3.9.1).
const workerUuid = randomUUID();
let workerCounter = 0;

function generate(ctx: RequestContext, config: PluginConfig, now: number): string {
  switch (config.generator) {
    case 'uuid':
      return randomUUID();
    case 'tracker':
      return `127.0.0.1-${ctx.port}-${process.pid}-0-0-${(now / 1000).toFixed(3)}`;
    default:
      workerCounter += 1;
      return `${workerUuid}#${workerCounter}`;
  }
}

export const correlationId: PluginDefinition = {
  name: 'correlation-id',
  priority: 100001,
  version: KONG_VERSION,
  configFields: [
    { header_name: { type: 'string', default: 'Kong-Request-ID' } },
    { generator: { type: 'string', default: 'uuid#counter', required: true, one_of: ['uuid', 'uuid#counter', 'tracker'] } },
    { echo_downstream: { type: 'boolean', required: true, default: false } },
  ],
  access(ctx, config, env) {
    const name = config.header_name as string;
    let id = ctx.getHeader(name);
    if (!id) {
      id = generate(ctx, config, env.now());
      ctx.setServiceHeader(name, id);
    }
    if (config.echo_downstream) ctx.pluginContext('correlation-id').correlation_id = id;
  },
  header_filter(ctx, config, env) {
    if (!config.echo_downstream) return;
    const name = config.header_name as string;
    const id = (ctx.pluginContext('correlation-id').correlation_id as string | undefined) ?? ctx.getHeader(name) ?? generate(ctx, config, env.now());
    ctx.setResponseHeader(name, id);
  },
};
