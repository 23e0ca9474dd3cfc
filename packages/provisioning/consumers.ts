import type { Plugin } from './admin-api/entities.ts';
import type { ProvisioningContext } from './context.ts';
import { ProvisioningError } from './errors.ts';
import { issueKey, keySpec, summarizeKey, type KeyExpiry, type KeySummary, type NewKey } from './key-credentials.ts';
import { DEFAULT_KEY_NAME } from './key-tags.ts';
import { limitsOf, planPluginOf } from './plan-plugin.ts';
import { limitsFor, type Limits, type PlanName } from './plans.ts';
import { withRollback } from './rollback.ts';
import { CONSUMER_TAG, isManaged, notManaged, planOf, planTag, type ManagedConsumer } from './tags.ts';

export interface ConsumerSummary {
  username: string;
  id: string;
  customId: string | null;
  plan: PlanName | null;
  limits: Limits | null;
  keys: KeySummary[];
  createdAt: number;
}

/** A consumer with a new key: the key is in here once, for the caller to hand out. */
export interface IssuedKey extends NewKey {
  username: string;
  plan: PlanName;
  consumerId: string;
  limits: Limits;
}

export interface NewConsumer {
  username: string;
  plan: PlanName;
  customId?: string;
  /** Enterprise only: its limits (plans.ts, limitsFor). */
  limits?: Partial<Limits>;
  /** Its first key: name (default `default`), scopes (none: everything) and expiry (none: never). */
  key?: KeyExpiry & { name?: string; scopes?: readonly string[] };
}

/**
 * Characters a username or custom_id may not hold: control and format characters (Unicode Cc,
 * Cf: bidi overrides make a name read as another), line and paragraph separators and lone
 * surrogates. Kong takes any string; the rows `list` and `show` print would break.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/**
 * `value` with every unprintable character as `\u{hex}`: what a table row or a line shows of a
 * name made past the library (through the Admin API), on one line and read as it is stored.
 */
export const escapeUnprintable = (value: string) =>
  value.replace(new RegExp(UNPRINTABLE, 'gu'), (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);

/** `value` quoted with every unprintable character escaped, so the message shows what was given. */
const quoted = (value: string) => escapeUnprintable(JSON.stringify(value));

function checkPrintable(field: string, value: string | undefined): void {
  if (value !== undefined && UNPRINTABLE.test(value)) {
    throw new ProvisioningError('consumer-options', `${field} ${quoted(value)}: control and format characters (Unicode Cc, Cf) and line breaks are not allowed`);
  }
}

/** The consumer named `username`, which must exist and be managed by the library. */
export async function requireConsumer({ admin }: ProvisioningContext, username: string): Promise<ManagedConsumer> {
  const consumer = await admin.findConsumer(username);
  if (!consumer) throw new ProvisioningError('consumer-not-found', `consumer ${username} does not exist`);
  if (!isManaged(consumer)) throw notManaged(username, consumer);
  return consumer;
}

/** A new consumer on a plan, with a key; all-or-nothing (withRollback). */
export async function createConsumer(context: ProvisioningContext, input: NewConsumer): Promise<IssuedKey> {
  const { admin } = context;
  checkPrintable('username', input.username);
  checkPrintable('custom_id', input.customId);
  const limits = limitsFor(context.catalogue, input.plan, input.limits);
  const spec = keySpec({ ...input.key, name: input.key?.name ?? DEFAULT_KEY_NAME }, context.now());
  const exists = () => new ProvisioningError('consumer-exists', `consumer ${input.username} already exists`);
  if (await admin.findConsumer(input.username)) throw exists();
  const tags = [CONSUMER_TAG, planTag(input.plan)];
  return withRollback(async (onRollback) => {
    const consumer = await admin.createConsumer({ username: input.username, custom_id: input.customId, tags }, `creating consumer ${input.username}`);
    // A username taken by another create between the check and here; or the custom_id, which is unique too.
    if ('taken' in consumer) {
      throw consumer.taken === 'username'
        ? exists()
        : new ProvisioningError('custom-id-taken', `custom_id ${input.customId} is already used by another consumer`);
    }
    // Deleting the consumer deletes its credentials and plugins (Kong cascades).
    onRollback(() => admin.deleteConsumer(consumer.id, `removing consumer ${input.username} again`));
    const { newKey } = await issueKey(admin, consumer.id, spec, context.now, 'creating the API key');
    await admin.createConsumerPlugin(consumer.id, { name: 'rate-limiting', config: await context.planConfig(limits), tags }, `applying plan ${input.plan}`);
    return { username: input.username, plan: input.plan, ...newKey, consumerId: consumer.id, limits };
  });
}

/** A consumer's summary and the plan plugin it was read from: its config says where the consumer's windows are counted. */
export interface ConsumerDetails {
  summary: ConsumerSummary;
  planPlugin: Plugin | undefined;
}

/** The plan plugin and the keys are independent reads: both at once, so a page or `show` waits for one round trip, not two. */
async function detailsOf({ admin, now }: ProvisioningContext, consumer: ManagedConsumer): Promise<ConsumerDetails> {
  const [plugin, keys] = await Promise.all([planPluginOf(admin, consumer.id), admin.keys(consumer.id)]);
  const summary: ConsumerSummary = {
    username: consumer.username,
    id: consumer.id,
    customId: consumer.custom_id,
    plan: planOf(consumer) as PlanName | null,
    limits: limitsOf(plugin),
    keys: keys.map((credential) => summarizeKey(credential, now())),
    createdAt: consumer.created_at,
  };
  return { summary, planPlugin: plugin };
}

export async function summarizeConsumer(context: ProvisioningContext, consumer: ManagedConsumer): Promise<ConsumerSummary> {
  return (await detailsOf(context, consumer)).summary;
}

export async function showConsumer(context: ProvisioningContext, username: string): Promise<ConsumerSummary> {
  return (await inspectConsumer(context, username)).summary;
}

/** `showConsumer` with the plan plugin it read, for callers that read the usage windows too (one read of it, not two). */
export async function inspectConsumer(context: ProvisioningContext, username: string): Promise<ConsumerDetails> {
  return detailsOf(context, await requireConsumer(context, username));
}

/** How `listConsumers` narrows the listing: a plan, and/or one more tag the consumers carry. */
export interface ConsumerFilter {
  plan?: PlanName;
  tag?: string;
}

/** The consumers the library manages, optionally of one plan and/or carrying one more tag. */
export async function* listConsumers({ admin }: ProvisioningContext, filter: ConsumerFilter = {}): AsyncGenerator<ManagedConsumer> {
  const tags = [CONSUMER_TAG, ...(filter.plan ? [planTag(filter.plan)] : []), ...(filter.tag ? [filter.tag] : [])].join(',');
  for await (const consumer of admin.listConsumers({ tags, size: 100 })) {
    if (isManaged(consumer)) yield consumer;
  }
}

export async function deleteConsumer(context: ProvisioningContext, username: string): Promise<void> {
  const consumer = await requireConsumer(context, username);
  await context.admin.deleteConsumer(consumer.id, `deleting ${username}`);
}
