import { randomUUID } from 'node:crypto';
import { listConsumers, requireConsumer } from './consumers.ts';
import type { ProvisioningContext } from './context.ts';
import { ProvisioningError } from './errors.ts';
import { limitsOf, planPluginOf } from './plan-plugin.ts';
import { limitsFor, type Limits, type PlanName } from './plans.ts';
import { unlessGone, withRollback } from './rollback.ts';
import { CONSUMER_TAG, planTag, type ManagedConsumer } from './tags.ts';

export interface PlanAssignment {
  username: string;
  plan: PlanName;
  limits: Limits;
}

/** Moves a consumer to `plan`: its plan plugin and its `plan:` tag; all-or-nothing. */
export async function setPlan(
  context: ProvisioningContext,
  username: string,
  plan: PlanName,
  custom?: Partial<Limits>,
): Promise<PlanAssignment> {
  const { admin } = context;
  const limits = limitsFor(context.catalogue, plan, custom);
  const consumer = await requireConsumer(context, username);
  const assignment = await withRollback(async (onRollback) => {
    const existing = await planPluginOf(admin, consumer.id);
    const tags = [CONSUMER_TAG, planTag(plan)];
    // each undo is registered before its write: a write applied whose answer was lost is undone too
    const config = await context.planConfig(limits);
    if (existing) {
      onRollback(() => admin.updatePlugin(existing.id, { config: existing.config, tags: existing.tags }, 'restoring the plan limits'));
      await admin.updatePlugin(existing.id, { config, tags }, 'updating the plan limits');
    } else {
      // Kong allows one rate-limiting plugin per consumer, route and service: one made by hand
      // on the consumer alone takes the plan's place, and Kong would answer a bare 409
      const occupant = (await admin.consumerPlugins(consumer.id)).find(
        (plugin) => plugin.name === 'rate-limiting' && plugin.route === null && plugin.service === null,
      );
      if (occupant) {
        throw new ProvisioningError(
          'consumer-not-managed',
          `consumer ${username} has a rate-limiting plugin the CLI did not make (${occupant.id}, without the tag ${CONSUMER_TAG}) where its plan goes: remove it, or tag it ${CONSUMER_TAG} to make it the plan`,
        );
      }
      const id = randomUUID();
      onRollback(unlessGone(() => admin.deletePlugin(id, 'removing the new plan plugin')));
      await admin.createConsumerPlugin(consumer.id, { id, name: 'rate-limiting', config, tags }, 'applying the plan limits');
    }
    const otherTags = consumer.tags.filter((tag) => !tag.startsWith('plan:') && tag !== CONSUMER_TAG);
    onRollback(() => admin.setConsumerTags(consumer.id, consumer.tags, "restoring the consumer's tags"));
    await admin.setConsumerTags(consumer.id, [...tags, ...otherTags], 'tagging the consumer with its plan');
    return { username, plan, limits };
  });
  await refuseConcurrentPlanChange(context, consumer, plan, limits);
  return assignment;
}

/**
 * Kong's Admin API has no lock: two plan changes of one consumer at once each write the plan
 * plugin, then the consumer's `plan:` tag, and the plugin can end with one's limits while the tag
 * names the other's plan (what `show`, `list --plan` and the usage metrics read). The plugin
 * written last is the plan in force, so a change that finds another plan or other limits in it
 * after its own writes fails with `plan-conflict`, naming them, and first tags the consumer with
 * that plan; the one whose plugin stayed succeeds (docs/api-keys.md "Changes at the same time").
 */
async function refuseConcurrentPlanChange(
  context: ProvisioningContext,
  consumer: ManagedConsumer,
  plan: PlanName,
  limits: Limits,
): Promise<void> {
  const plugin = await planPluginOf(context.admin, consumer.id);
  const inForce = plugin?.tags.find((tag) => tag.startsWith('plan:'));
  const limitsInForce = limitsOf(plugin);
  if (inForce === undefined || limitsInForce === null) return;
  if (inForce === planTag(plan) && limitsInForce.minute === limits.minute && limitsInForce.day === limits.day) return;
  if (inForce !== planTag(plan)) {
    const otherTags = consumer.tags.filter((tag) => !tag.startsWith('plan:') && tag !== CONSUMER_TAG);
    await context.admin.setConsumerTags(consumer.id, [CONSUMER_TAG, inForce, ...otherTags], 'tagging the consumer with the plan in force');
  }
  const { username } = consumer;
  throw new ProvisioningError(
    'plan-conflict',
    `another plan change of ${username} ran at the same time and wrote last: ${username} is on plan ${inForce.slice(5)} ` +
      `(${limitsInForce.minute}/min, ${limitsInForce.day}/day)`,
  );
}

/** Pushes the catalogue's limits to every consumer of the given plans; reports progress. */
export async function syncPlans(
  context: ProvisioningContext,
  plans: readonly PlanName[],
  progress: (done: number, plan: PlanName, username: string) => void,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const plan of plans) {
    if ('custom' in context.catalogue.plans[plan]) continue;
    let done = 0;
    counts[plan] = done;
    for await (const consumer of listConsumers(context, { plan })) {
      await setPlan(context, consumer.username, plan);
      counts[plan] = ++done;
      progress(done, plan, consumer.username);
    }
  }
  return counts;
}
