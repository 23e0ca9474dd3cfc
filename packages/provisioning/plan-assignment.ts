import { listConsumers, requireConsumer } from './consumers.ts';
import type { ProvisioningContext } from './context.ts';
import { planPluginOf } from './plan-plugin.ts';
import { limitsFor, type Limits, type PlanName } from './plans.ts';
import { withRollback } from './rollback.ts';
import { CONSUMER_TAG, planTag } from './tags.ts';

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
  return withRollback(async (onRollback) => {
    const existing = await planPluginOf(admin, consumer.id);
    const tags = [CONSUMER_TAG, planTag(plan)];
    if (existing) {
      await admin.updatePlugin(existing.id, { config: await context.planConfig(limits), tags }, 'updating the plan limits');
      onRollback(() => admin.updatePlugin(existing.id, { config: existing.config, tags: existing.tags }, 'restoring the plan limits'));
    } else {
      const created = await admin.createConsumerPlugin(
        consumer.id,
        { name: 'rate-limiting', config: await context.planConfig(limits), tags },
        'applying the plan limits',
      );
      onRollback(() => admin.deletePlugin(created.id, 'removing the new plan plugin'));
    }
    const otherTags = consumer.tags.filter((tag) => !tag.startsWith('plan:') && tag !== CONSUMER_TAG);
    await admin.setConsumerTags(consumer.id, [...tags, ...otherTags], 'tagging the consumer with its plan');
    return { username, plan, limits };
  });
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
