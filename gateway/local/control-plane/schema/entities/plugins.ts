import { defineEntity, type EntityOf } from '../entity.ts';
import * as T from '../typedefs.ts';

/**
 * kong/db/schema/entities/plugins.lua (3.9.3). `config` is abstract here: each plugin's own schema
 * (schema/plugins/) validates it, chosen by `name` (subschema_key). A plugin's schema may declare
 * `protocols` too (most say typedefs.protocols_http): that field then replaces this one.
 */
export const plugins = defineEntity({
  name: 'plugins',
  primary_key: ['id'],
  endpoint_key: 'instance_name',
  cache_key: ['name', 'route', 'service', 'consumer'],
  subschema_key: 'name',
  schema: T.entity({
    id: T.uuid(),
    name: T.string({ required: true }),
    instance_name: T.utf8Name(),
    created_at: T.autoTimestamp(),
    updated_at: T.autoTimestamp(),
    route: T.foreign('routes', { on_delete: 'cascade' }),
    service: T.foreign('services', { on_delete: 'cascade' }),
    consumer: T.foreign('consumers', { on_delete: 'cascade' }),
    config: T.abstractRecord(),
    protocols: T.protocols(),
    enabled: T.boolean({ required: true, default: true }),
    tags: T.tags(),
  }),
  declarative: {
    key: [['name', 'instance_name', 'service', 'route', 'consumer']],
    topLevel: true,
    nestedIn: ['service', 'route', 'consumer'],
  },
  snapshot: {
    description:
      'kong/db/schema/entities/plugins.lua. config is complete: the control plane has validated it and filled every default, ' +
      'so the data plane never applies a schema.',
    fields: ['id', 'name', 'instance_name', 'enabled', 'protocols', 'route', 'service', 'consumer', 'config'],
    // Any names: a plugin runs on the protocols it lists and skips the others, so a row stored
    // before the control plane checked them (an `htps`) leaves that plugin idle instead of making
    // the data plane refuse the whole snapshot.
    narrow: { protocols: T.set(T.string(), { required: true }) },
  },
  subschema(plugin, errors, subschemas) {
    const scope = { consumer: plugin.consumer !== null, route: plugin.route !== null, service: plugin.service !== null };
    plugin.config = subschemas.validateConfig(plugin.name, plugin.config, scope, errors);
  },
});

export type Plugin = EntityOf<typeof plugins>;
