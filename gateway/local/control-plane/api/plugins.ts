import type Router from '@koa/router';
import type Koa from 'koa';
import type { EntityService } from '../db/entity-service.ts';
import { NotFound } from '../schema/errors.ts';
import { kongSchemaField } from '../schema/kong-format.ts';
import type { PluginRegistry } from '../schema/plugins/registry.ts';
import { isPlainObject } from '../schema/validate.ts';
import { entityKey } from './path-keys.ts';

// kong/api/routes/plugins.lua (3.9.3), before the generic plugin endpoints it extends.

/**
 * patch_plugin (:73-110): a PATCH that does not name the plugin gets the stored plugin's name
 * (looked up by id or instance_name, not within the URL's parent; none: 404), so that a form's
 * `config.*` is read by that plugin's schema (arguments.ts) and checked as a JSON body would be.
 */
const namedAsStored = (service: EntityService): Koa.Middleware => async (ctx, next) => {
  const body: unknown = ctx.request.body;
  const input: Record<string, unknown> = isPlainObject(body) ? body : {};
  if (input.name === undefined) {
    const plugin = service.select('plugins', entityKey(ctx, 'plugins', 'plugins'));
    if (!plugin) throw new NotFound();
    (ctx.request as { body: unknown }).body = { ...input, name: plugin.name };
  }
  await next();
};

export function mountPluginRoutes(router: Router, service: EntityService, registry: PluginRegistry): void {
  for (const parent of ['', '/services/:services', '/routes/:routes', '/consumers/:consumers']) {
    router.patch(`${parent}/plugins/:plugins`, namedAsStored(service));
  }
  // :122-137, deprecated for /schemas/plugins/{name}: the config field's schema as
  // schema_to_jsonable prints a record, its fields and entity_checks only (no plugin here declares
  // entity_checks within config).
  router.get('/plugins/schema/:name', (ctx) => {
    const name = ctx.params.name ?? '';
    const definition = registry.get(name);
    if (!definition) {
      ctx.status = 404;
      ctx.body = { message: `No plugin named '${name}'` };
      return;
    }
    ctx.body = { entity_checks: [], fields: kongSchemaField(definition.config).fields };
  });
}
