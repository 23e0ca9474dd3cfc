import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { formField, formFields } from '../http/form.ts';
import { pageContext, sendPage } from '../http/state.ts';
import { KeyLimitReached, ROTATION_GRACE_SECONDS } from '../keys.ts';
import { accountClosedPage } from '../pages/account-pages.ts';
import { EXPIRY_CHOICES, dashboardPage, keyShownPage, replacedKeyNote, type DashboardView, type NewKeyForm } from '../pages/key-pages.ts';
import { BASE } from '../paths.ts';
import type { PortalServices } from './services.ts';
import { ProvisioningError } from '../../../packages/provisioning/index.ts';

/** Pages for signed-in accounts only: the others go to sign-in (a POST is refused). */
async function signedIn(ctx: Context, next: Next): Promise<void> {
  if (ctx.state.account?.consumer) {
    await next();
    return;
  }
  if (ctx.method === 'POST') ctx.status = 303;
  ctx.redirect(`${BASE}/signin`);
}

/**
 * An account whose consumer is gone was closed by an administrator (`consumers delete`), which is
 * deliberate: its pages say so with a 403, and the portal never makes the consumer again. An
 * admin reopens it by creating the consumer anew (docs/portal.md).
 */
function whenClosed(supportEmail: string | undefined): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (!(error instanceof ProvisioningError && error.code === 'consumer-not-found')) throw error;
      sendPage(ctx, 403, accountClosedPage(pageContext(ctx), supportEmail));
    }
  };
}

function fullText({ kind, max }: KeyLimitReached): string {
  if (kind === 'live') return `You have ${max} keys, the most an account can have: revoke one to create another.`;
  const hours = ROTATION_GRACE_SECONDS / 3600;
  return `${max} of your replaced keys are still in their grace period, the most an account can have: rotate again once the oldest stops working (${hours} hours after its rotation), or revoke a key to stop it and the keys it replaced at once.`;
}

/** The refusals of a key form, the cap's and the library's: the status the page answers with (its README's table) and what it says. */
function refusal(error: unknown, name: string): { status: number; text: string } | undefined {
  if (error instanceof KeyLimitReached) return { status: 409, text: fullText(error) };
  if (!(error instanceof ProvisioningError)) return undefined;
  switch (error.code) {
    case 'key-options':
      return { status: 400, text: `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.` };
    case 'key-exists':
      return { status: 409, text: `You already have a key named ${name}: choose another name, or rotate that key.` };
    case 'key-not-found':
      return { status: 404, text: `You have no key named ${name}.` };
    case 'key-conflict':
      return { status: 409, text: `Your key ${name} was being changed elsewhere at the same moment: nothing was changed, try again.` };
    default:
      return undefined;
  }
}

const DAY_SECONDS = 86400;

/**
 * The dashboard (plan, limits, usage, keys, plans) and the key forms, for the signed-in account's
 * own consumer only: a form names a key by its name, looked up among that consumer's keys alone.
 */
export function keyRoutes(router: Router, services: PortalServices): void {
  const closedAsPage = whenClosed(services.supportEmail);
  async function sendDashboard(ctx: Context, status: number, extra: Pick<DashboardView, 'message' | 'form'> = {}) {
    const account = ctx.state.account!;
    const [overview, totals] = await Promise.all([services.keys.overview(account.consumer!), services.usage.totals(account.consumer!)]);
    const usage = await services.usage.windows(overview.consumerId, overview.planPlugin).then(
      (windows) => ({ windows, totals }),
      (error: Error) => ({ error: error.message }),
    );
    const { apiUrl, supportEmail } = services;
    const view: DashboardView = { overview, usage, apiUrl, catalogue: services.keys.plans(), supportEmail, ...extra };
    sendPage(ctx, status, dashboardPage(pageContext(ctx), account, view));
  }

  /** Runs a key action; a refusal of the library (a bad or unknown name…) is the dashboard again with its message, never a 5xx. */
  async function refusedAsPage(ctx: Context, name: string, action: () => Promise<void>, form?: NewKeyForm) {
    try {
      await action();
    } catch (error) {
      const refused = refusal(error, name);
      if (!refused) throw error;
      await sendDashboard(ctx, refused.status, { message: { text: refused.text, kind: 'error' }, ...(form ? { form } : {}) });
    }
  }

  /** The name a rotate or revoke form sends: one of the account's own keys, else 400 or 404 on the dashboard. */
  async function keyName(ctx: Context): Promise<string | undefined> {
    const name = formField(ctx, 'name', 40);
    if (name !== '') return name;
    await sendDashboard(ctx, 400, { message: { text: 'The form named no key: use the buttons beside each key.', kind: 'error' } });
    return undefined;
  }

  router.get('/', signedIn, closedAsPage, async (ctx) => {
    const notice = await services.sessions.takeNotice(ctx.state.sessionId!);
    await sendDashboard(ctx, 200, notice ? { message: { text: notice, kind: 'info' } } : {});
  });

  router.post('/keys', signedIn, closedAsPage, async (ctx) => {
    const account = ctx.state.account!;
    const form: NewKeyForm = { name: formField(ctx, 'name', 64).trim(), scopes: formFields(ctx, 'scope'), expires: formField(ctx, 'expires', 16) || 'never' };
    const choice = EXPIRY_CHOICES.find(([value]) => value === form.expires);
    if (!choice) {
      await sendDashboard(ctx, 400, { message: { text: 'Choose when the key expires from the list.', kind: 'error' }, form: { ...form, expires: 'never' } });
      return;
    }
    await refusedAsPage(
      ctx,
      form.name,
      async () => {
        const days = choice[0] === 'never' ? undefined : Number(choice[0]);
        const expiry = days ? { expiresInSeconds: days * DAY_SECONDS } : {};
        const added = await services.keys.add(account.consumer!, { name: form.name, scopes: form.scopes, ...expiry });
        services.audit({ account: account.id, action: 'add-key', fingerprint: added.fingerprint, ip: ctx.ip });
        sendPage(ctx, 201, keyShownPage(pageContext(ctx), added, `Your new key ${added.name} is ready.`, services.apiUrl));
      },
      form,
    );
  });

  router.post('/keys/rotate', signedIn, closedAsPage, async (ctx) => {
    const account = ctx.state.account!;
    const name = await keyName(ctx);
    if (name === undefined) return;
    await refusedAsPage(ctx, name, async () => {
      const rotated = await services.keys.rotate(account.consumer!, name);
      services.audit({ account: account.id, action: 'rotate-key', fingerprint: rotated.fingerprint, ip: ctx.ip });
      // the grace period, or sooner for a key that expires sooner anyway
      const what = `A new ${rotated.name} key is ready. ${replacedKeyNote(rotated.previousKeysUntil, Math.floor(Date.now() / 1000))}`;
      sendPage(ctx, 200, keyShownPage(pageContext(ctx), rotated, what, services.apiUrl));
    });
  });

  router.post('/keys/revoke', signedIn, closedAsPage, async (ctx) => {
    const account = ctx.state.account!;
    const name = await keyName(ctx);
    if (name === undefined) return;
    await refusedAsPage(ctx, name, async () => {
      const { revoked, fingerprint } = await services.keys.revoke(account.consumer!, name);
      services.audit({ account: account.id, action: 'revoke-key', ...(fingerprint ? { fingerprint } : {}), ip: ctx.ip });
      await services.sessions.setNotice(ctx.state.sessionId!, `${revoked} key(s) revoked (named ${name}): calls with them now get 401.`);
      ctx.status = 303;
      ctx.redirect(`${BASE}/`);
    });
  });
}
