import test, { type ExecutionContext } from 'ava';
import { AdminApi, Provisioning, loadCatalogue } from '../../packages/provisioning/index.ts';
import { plansOf } from '../../packages/usage/index.ts';
import { readPlanLimits } from '../../scripts/plan-limits/plan-limits.ts';
import { startKongShapedAdmin } from './kong-shaped-admin.ts';

// A consumer's plan plugin is the rate-limiting plugin the library put on it: consumer-scoped,
// no route, no service, tagged petstore-consumer (packages/provisioning/plan-plugin.ts). On a
// shared Kong another team may scope a rate-limiting plugin of theirs to our consumer on a route
// of theirs: set-plan, show, create's and set-plan's conflict check and the usage and plan-limits
// readers leave it alone.

const THEIRS = { route: { id: 'billing-route-id' }, tags: ['billing-team'], config: { minute: 7, day: 70 } };

async function start(t: ExecutionContext, withPlan: boolean) {
  const admin = await startKongShapedAdmin();
  t.teardown(admin.close);
  const consumer = admin.addConsumer('shared', ['petstore-consumer', 'plan:free']);
  const theirs = admin.addPlugin(consumer.id, THEIRS);
  if (withPlan) admin.addPlugin(consumer.id, { tags: ['petstore-consumer', 'plan:free'], config: { minute: 60, day: 1000 } });
  const provisioning = Provisioning.connect({ url: admin.url }, loadCatalogue());
  return { admin, consumer, theirs, provisioning };
}

test("set-plan changes our plan plugin, never another team's route-scoped one; show reads ours", async (t) => {
  const { admin, consumer, theirs, provisioning } = await start(t, true);

  t.like(await provisioning.show('shared'), { plan: 'free', limits: { minute: 60, day: 1000 } });
  await provisioning.setPlan('shared', 'pro');

  const [stillTheirs, ours] = admin.plugins(consumer.id);
  t.deepEqual(stillTheirs, theirs, 'theirs untouched');
  t.like(ours, { route: null, tags: ['petstore-consumer', 'plan:pro'], config: { minute: 300, day: 10000 } });
  t.like(await provisioning.show('shared'), { plan: 'pro', limits: { minute: 300, day: 10000 } });
});

test("set-plan of a consumer with only another team's plugin makes a plan plugin of its own", async (t) => {
  const { admin, consumer, theirs, provisioning } = await start(t, false);

  t.like(await provisioning.show('shared'), { limits: null });
  await provisioning.setPlan('shared', 'pro');

  const plugins = admin.plugins(consumer.id);
  t.is(plugins.length, 2);
  t.deepEqual(plugins[0], theirs);
  t.like(plugins[1], { route: null, tags: ['petstore-consumer', 'plan:pro'], config: { minute: 300 } });
});

test("usage's plans and the plan-limits exporter read our plan plugin only", async (t) => {
  const { admin } = await start(t, true);
  // tagged as ours by mistake, yet on a route: not a plan either
  admin.addPlugin(admin.consumerId('shared'), { ...THEIRS, tags: ['petstore-consumer', 'plan:business'] });
  const api = AdminApi.connect({ url: admin.url });
  const many = Array.from({ length: 25 }, (_, i) => `nobody-${i}`);

  for (const usernames of [['shared'], ['shared', ...many]]) {
    t.like((await plansOf(api, usernames)).get('shared'), { plan: 'free', limitMinute: 60, limitDay: 1000 });
  }
  t.like(await readPlanLimits(api), [{ consumer: 'shared', minute: 60, day: 1000 }]);
});

test("set-plan of a consumer with a consumer-wide rate-limiting plugin made by hand names it instead of Kong's 409", async (t) => {
  const { admin, consumer, provisioning } = await start(t, false);
  const byHand = admin.addPlugin(consumer.id, { tags: [], config: { minute: 5, day: 50 } });
  const writes = () => admin.requests.filter((r) => r.method !== 'GET').length;
  const before = writes();

  await t.throwsAsync(provisioning.setPlan('shared', 'pro'), {
    message: `consumer shared has a rate-limiting plugin the CLI did not make (${byHand.id}, without the tag petstore-consumer) where its plan goes: remove it, or tag it petstore-consumer to make it the plan`,
  });
  t.is(writes(), before);
});
