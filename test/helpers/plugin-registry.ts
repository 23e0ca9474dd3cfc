import { describePlugins } from '../../gateway/local/cmd/describe-plugins.ts';
import { customPlugins } from '../../gateway/local/cmd/gateway.ts';
import { BUNDLED_SCHEMAS, PluginRegistry } from '../../gateway/local/control-plane/schema/plugins/registry.ts';
import { PLUGINS_DIR } from './gateway.ts';

let registry: Promise<PluginRegistry> | undefined;

/**
 * The control plane's plugin registry for gateway/plugins, as startGateway builds it: the data
 * plane's Lua describes the handlers and custom schemas (one nginx run per test process).
 */
export function pluginRegistry(): Promise<PluginRegistry> {
  const plugins = [...BUNDLED_SCHEMAS.map((schema) => schema.name), ...customPlugins(PLUGINS_DIR)];
  registry ??= describePlugins({ plugins, pluginsDir: PLUGINS_DIR }).then(({ plugins: described }) =>
    PluginRegistry.fromDescriptions(described),
  );
  return registry;
}
