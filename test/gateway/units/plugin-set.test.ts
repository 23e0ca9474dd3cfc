import test from 'ava';
import type { PluginDefinition } from '../../../gateway/local/plugins/plugin.ts';
import { PluginSet, runOrder } from '../../../gateway/local/plugins/plugin-set.ts';
import type { PluginRegistry } from '../../../gateway/local/plugins/registry.ts';
import type { Plugin } from '../../../gateway/local/control-plane/db/entities.ts';

const definition = (name: string, priority: number, extra: Partial<PluginDefinition> = {}): PluginDefinition => ({
  name, priority, version: '1.0.0', configFields: [], ...extra,
});
const DEFINITIONS = new Map([
  ['limits', definition('limits', 910)],
  ['auth', definition('auth', 1250, { noConsumer: true })],
  ['tie-a', definition('tie-a', 1000)],
  ['tie-b', definition('tie-b', 1000)],
]);
const registry = { get: (name: string) => DEFINITIONS.get(name) } as unknown as PluginRegistry;

let n = 0;
function plugin(name: string, scope: { route?: string; service?: string; consumer?: string }, label: string): Plugin {
  n += 1;
  return {
    id: `p${n}`, name, instance_name: null, config: { label }, enabled: true, protocols: ['http'],
    route: scope.route ? { id: scope.route } : null, service: scope.service ? { id: scope.service } : null,
    consumer: scope.consumer ? { id: scope.consumer } : null, tags: null, created_at: n, updated_at: n,
  };
}

// kong/runloop/plugins_iterator.lua (3.9.3) lookup_cfg: route+service+consumer, route+consumer,
// service+consumer, route+service, consumer, route, service, global.
const set = new PluginSet(
  [
    plugin('limits', {}, 'global'),
    plugin('limits', { service: 'S' }, 'service'),
    plugin('limits', { route: 'R' }, 'route'),
    plugin('limits', { consumer: 'C' }, 'consumer'),
    plugin('limits', { route: 'R', service: 'S' }, 'route+service'),
    plugin('limits', { service: 'S', consumer: 'C' }, 'service+consumer'),
    plugin('limits', { route: 'R', consumer: 'C' }, 'route+consumer'),
    plugin('limits', { route: 'R', service: 'S', consumer: 'C' }, 'route+service+consumer'),
  ],
  registry,
);
const entry = set.entries[0]!;
const label = (route?: string, service?: string, consumer?: string) => set.lookup(entry, route, service, consumer)?.label;

test('lookup follows Kong\'s precedence between scopes', (t) => {
  t.is(label('R', 'S', 'C'), 'route+service+consumer');
  t.is(label('R', 'X', 'C'), 'route+consumer');
  t.is(label('Y', 'S', 'C'), 'service+consumer');
  t.is(label('R', 'S', 'D'), 'route+service');
  t.is(label('Y', 'X', 'C'), 'consumer');
  t.is(label('R', 'X', 'D'), 'route');
  t.is(label('Y', 'S', 'D'), 'service');
  t.is(label('Y', 'X', 'D'), 'global');
});

test('planFor precomputes per route the instance each consumer gets', (t) => {
  const [planned] = set.planFor('R', 'S');
  t.is(PluginSet.configFor(planned!, 'C')?.label, 'route+service+consumer');
  t.is(PluginSet.configFor(planned!, 'D')?.label, 'route+service');
  t.is(PluginSet.configFor(planned!, undefined)?.label, 'route+service');
});

test('a plugin without consumer scope ignores consumer instances', (t) => {
  const auth = new PluginSet([plugin('auth', { route: 'R' }, 'route'), plugin('auth', {}, 'global')], registry);
  t.is(auth.lookup(auth.entries[0]!, 'R', 'S', 'C')?.label, 'route');
});

// kong/db/dao/plugins.lua (3.9.3) sort_by_handler_priority.
test('run order: PRIORITY descending, equal priorities by name descending', (t) => {
  const both = new PluginSet([plugin('tie-a', {}, 'a'), plugin('limits', {}, 'l'), plugin('auth', {}, 'k'), plugin('tie-b', {}, 'b')], registry);
  t.deepEqual(both.entries.map((e) => e.definition.name), ['auth', 'tie-b', 'tie-a', 'limits']);
  t.true(runOrder({ name: 'b', priority: 5 }, { name: 'a', priority: 5 }) < 0);
  t.true(runOrder({ name: 'a', priority: 6 }, { name: 'b', priority: 5 }) < 0);
});

test('disabled plugins are left out', (t) => {
  const disabled = { ...plugin('limits', {}, 'off'), enabled: false };
  t.deepEqual(new PluginSet([disabled], registry).entries, []);
});
