import { randomUUID } from 'node:crypto';
import type { Consumer, Plugin } from './admin-api/entities.ts';
import type { ProvisioningContext } from './context.ts';
import { ProvisioningError } from './errors.ts';
import { issueKey, keySpec, summarizeKey, type KeyExpiry, type KeySummary, type NewKey } from './key-credentials.ts';
import { DEFAULT_KEY_NAME } from './key-tags.ts';
import { limitsOf, planPluginOf } from './plan-plugin.ts';
import { limitsFor, type Limits, type PlanName } from './plans.ts';
import { unlessGone, withRollback } from './rollback.ts';
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

/**
 * Kong's Admin API reads a UUID-shaped `/consumers/{x}` as an id and looks it up by id only
 * (kong/api/endpoints.lua:254 at 3.9.3; kong/tools/uuid.lua:7, case-insensitive): a consumer with
 * such a username could be created but never found by it again.
 */
const UUID_SHAPED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A name `/consumers/{name}` can carry: `.` and `..` are dot segments, which the URL resolves away (WHATWG URL, nginx). */
function checkInPath(username: string): void {
  if (username === '.' || username === '..') {
    throw new ProvisioningError('consumer-options', `username ${quoted(username)}: a URL path cannot carry it as a name (a dot segment)`);
  }
}

/** A username the Admin API's `/consumers/{username}` can find again (checkPrintable aside). */
function checkFindable(username: string): void {
  checkInPath(username);
  if (UUID_SHAPED.test(username)) {
    throw new ProvisioningError('consumer-options', `username ${quoted(username)}: Kong reads a UUID-shaped name as a consumer id, so it could never be found by name: choose another`);
  }
}

/** The consumer named `username`, which must exist and be managed by the library. */
export async function requireConsumer({ admin }: ProvisioningContext, username: string): Promise<ManagedConsumer> {
  checkInPath(username);
  const consumer = await admin.findConsumer(username);
  if (!consumer) throw new ProvisioningError('consumer-not-found', `consumer ${username} does not exist`);
  if (!isManaged(consumer)) throw notManaged(username, consumer);
  return consumer;
}

/**
 * A new consumer on a plan, with a key; all-or-nothing (withRollback). Every entity gets an id
 * made here, and the consumer's removal (which takes its key and plugin with it: Kong cascades)
 * is registered before its POST, so a create whose answer is lost is undone too. The consumer is
 * tagged with its plan last, once the plan plugin exists: a create cut short where nothing can
 * undo it (a kill) leaves a consumer without a `plan:` tag, never one reported on a plan it lacks;
 * `show` calls it unfinished, and `create` again says to delete it first (its key was never shown).
 */
export async function createConsumer(context: ProvisioningContext, input: NewConsumer): Promise<IssuedKey> {
  const { admin } = context;
  checkPrintable('username', input.username);
  checkPrintable('custom_id', input.customId);
  checkFindable(input.username);
  const limits = limitsFor(context.catalogue, input.plan, input.limits);
  const spec = keySpec({ ...input.key, name: input.key?.name ?? DEFAULT_KEY_NAME }, context.now());
  const exists = (found?: Consumer) =>
    new ProvisioningError(
      'consumer-exists',
      found && isUnfinished(found)
        ? `consumer ${input.username} already exists, unfinished (a create was cut short; its key was never shown): delete it, then create it again`
        : `consumer ${input.username} already exists`,
    );
  const found = await admin.findConsumer(input.username);
  if (found) throw exists(found);
  const tags = [CONSUMER_TAG, planTag(input.plan)];
  return withRollback(async (onRollback) => {
    const id = randomUUID();
    let refused = false;
    onRollback(unlessGone(async () => refused || admin.deleteConsumer(id, `removing consumer ${input.username} again`)));
    const consumer = await admin.createConsumer({ id, username: input.username, custom_id: input.customId, tags: [CONSUMER_TAG] }, `creating consumer ${input.username}`);
    // A username taken by another create between the check and here; or the custom_id, which is unique too.
    if ('taken' in consumer) {
      refused = true;
      throw consumer.taken === 'username'
        ? exists()
        : new ProvisioningError('custom-id-taken', `custom_id ${input.customId} is already used by another consumer`);
    }
    const { newKey } = await issueKey(admin, id, spec, context.now, 'creating the API key');
    const plugin = { id: randomUUID(), name: 'rate-limiting', config: await context.planConfig(limits), tags };
    await admin.createConsumerPlugin(id, plugin, `applying plan ${input.plan}`);
    await admin.setConsumerTags(id, tags, `tagging consumer ${input.username} with plan ${input.plan}`);
    return { username: input.username, plan: input.plan, ...newKey, consumerId: id, limits };
  });
}

/** One of ours without a `plan:` tag: a create cut short before its last step (createConsumer). */
const isUnfinished = (consumer: Consumer) => isManaged(consumer) && planOf(consumer) === null;

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
